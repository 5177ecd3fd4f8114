package kafkafmt

import (
	"fmt"
	"io"
	"unicode/utf16"
)

// Limits of ParseProperties. A client's configuration is a few KB (a PEM
// certificate inline is the largest value in practice).
const (
	MaxPropertiesBytes   = 1 << 20
	MaxPropertiesEntries = 10_000
)

// Property is one key = value of a .properties file.
type Property struct {
	Key, Value string
	Line       int // the line its key starts on
}

// Properties is a .properties file read: every entry in the file's order,
// a key set twice listed twice (java.util.Properties keeps the last).
type Properties struct {
	Entries []Property
}

// Get is the value Java ends with for key: its last entry.
func (p *Properties) Get(key string) (Property, bool) {
	for i := len(p.Entries) - 1; i >= 0; i-- {
		if p.Entries[i].Key == key {
			return p.Entries[i], true
		}
	}
	return Property{}, false
}

// Keys lists each key once, in the order the file first sets it.
func (p *Properties) Keys() []string {
	seen := map[string]bool{}
	var keys []string
	for _, e := range p.Entries {
		if !seen[e.Key] {
			seen[e.Key] = true
			keys = append(keys, e.Key)
		}
	}
	return keys
}

// ParseProperties reads a .properties file as java.util.Properties.load
// reads it, which is how Kafka's tools load a client's configuration
// (Utils.loadProps): natural lines end with LF, CR or CRLF; blank lines and
// lines whose first non-blank character is # or ! are comments; a line
// ending in an odd number of backslashes continues on the next, whose
// leading blanks are dropped; the key runs to the first unescaped =, : or
// blank (space, tab, form feed), then blanks, at most one = or :, and
// blanks are skipped and the rest is the value; \t \n \r \f and \uXXXX are
// escapes, and a backslash before any other character stands for that
// character. Java reads the bytes as ISO-8859-1, so a byte outside ASCII
// (UTF-8 text, a byte-order mark) would reach Kafka as other characters
// than the file shows: it is refused, outside comments, naming the line and
// saying to write \uXXXX. A malformed \u escape is refused as Java refuses
// it. Files over MaxPropertiesBytes or MaxPropertiesEntries are refused.
func ParseProperties(r io.Reader) (*Properties, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxPropertiesBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxPropertiesBytes {
		return nil, lineErr(0, "more than %s: a client's .properties file is a few KB", sizeText(MaxPropertiesBytes))
	}
	pr := &propReader{b: b, line: 1}
	out := &Properties{}
	for {
		buf, start, ok, err := pr.readLine()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		key, value, err := splitProperty(buf, start)
		if err != nil {
			return nil, err
		}
		if len(out.Entries) == MaxPropertiesEntries {
			return nil, lineErr(start, "more than %d entries: a client's configuration has a few dozen", MaxPropertiesEntries)
		}
		out.Entries = append(out.Entries, Property{Key: key, Value: value, Line: start})
	}
}

// propReader cuts the input into logical lines as Properties' LineReader
// does.
type propReader struct {
	b    []byte
	off  int
	line int // the natural line being read
}

// eol counts the line end c just read (CR LF is one).
func (r *propReader) eol(c byte) {
	if c == '\n' || r.off >= len(r.b) || r.b[r.off] != '\n' {
		r.line++
	}
}

func (r *propReader) readLine() (buf []byte, start int, ok bool, err error) {
	skipWhite, continued, backslash := true, false, false
	for {
		if r.off >= len(r.b) {
			if len(buf) == 0 {
				return nil, 0, false, nil
			}
			if backslash {
				buf = buf[:len(buf)-1]
			}
			return buf, start, true, nil
		}
		c := r.b[r.off]
		r.off++
		if skipWhite {
			if c == ' ' || c == '\t' || c == '\f' {
				continue
			}
			if !continued && (c == '\r' || c == '\n') {
				r.eol(c)
				continue
			}
			skipWhite, continued = false, false
		}
		if len(buf) == 0 && c != '\r' && c != '\n' {
			start = r.line
			if c == '#' || c == '!' {
				for r.off < len(r.b) {
					c = r.b[r.off]
					r.off++
					if c == '\r' || c == '\n' {
						r.eol(c)
						break
					}
				}
				skipWhite = true
				continue
			}
		}
		if c != '\n' && c != '\r' {
			if c >= 0x80 {
				if r.off == 1 && len(r.b) >= 3 && string(r.b[:3]) == "\xef\xbb\xbf" {
					return nil, 0, false, lineErr(r.line, "the file starts with a UTF-8 byte-order mark, which Kafka's tools read (as ISO-8859-1, java.util.Properties.load) as part of the first key; save the file without it")
				}
				return nil, 0, false, lineErr(r.line, "byte 0x%02X is not ASCII: Kafka's tools read a .properties file as ISO-8859-1 (java.util.Properties.load), so other text reaches Kafka changed; write the character as \\uXXXX", c)
			}
			buf = append(buf, c)
			backslash = c == '\\' && !backslash
			continue
		}
		// A line end.
		if len(buf) == 0 {
			r.eol(c)
			skipWhite = true
			continue
		}
		if !backslash {
			r.eol(c)
			return buf, start, true, nil
		}
		// A backslash at the end of the line continues it.
		buf = buf[:len(buf)-1]
		skipWhite, continued, backslash = true, true, false
		if c == '\r' && r.off < len(r.b) && r.b[r.off] == '\n' {
			r.off++
		}
		r.line++
		if r.off >= len(r.b) {
			return buf, start, true, nil
		}
	}
}

// splitProperty cuts a logical line into key and value (Properties.load0).
func splitProperty(line []byte, n int) (string, string, error) {
	keyLen, valueStart, hasSep, backslash := 0, len(line), false, false
	for keyLen < len(line) {
		c := line[keyLen]
		if (c == '=' || c == ':') && !backslash {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if (c == ' ' || c == '\t' || c == '\f') && !backslash {
			valueStart = keyLen + 1
			break
		}
		backslash = c == '\\' && !backslash
		keyLen++
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if c != ' ' && c != '\t' && c != '\f' {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valueStart++
	}
	key, err := unescape(line[:keyLen], n)
	if err != nil {
		return "", "", err
	}
	value, err := unescape(line[valueStart:], n)
	return key, value, err
}

// unescape applies Properties.loadConvert's escapes.
func unescape(in []byte, n int) (string, error) {
	out := make([]uint16, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' || i+1 >= len(in) {
			out = append(out, uint16(c))
			continue
		}
		i++
		c = in[i]
		switch c {
		case 'u':
			if i+4 >= len(in) {
				return "", lineErr(n, "a malformed \\uxxxx escape: \\u takes four hex digits (java.util.Properties.load refuses it: IllegalArgumentException)")
			}
			v := 0
			for _, h := range in[i+1 : i+5] {
				d := hexDigit(h)
				if d < 0 {
					return "", lineErr(n, "a malformed \\uxxxx escape %s: \\u takes four hex digits (java.util.Properties.load refuses it: IllegalArgumentException)", fmt.Sprintf("%q", "\\u"+string(in[i+1:i+5])))
				}
				v = v<<4 | d
			}
			out = append(out, uint16(v))
			i += 4
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'n':
			out = append(out, '\n')
		case 'f':
			out = append(out, '\f')
		default:
			out = append(out, uint16(c))
		}
	}
	return string(utf16.Decode(out)), nil
}

func hexDigit(h byte) int {
	switch {
	case h >= '0' && h <= '9':
		return int(h - '0')
	case h >= 'a' && h <= 'f':
		return int(h-'a') + 10
	case h >= 'A' && h <= 'F':
		return int(h-'A') + 10
	}
	return -1
}
