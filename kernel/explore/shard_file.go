// shard_file.go: a shard's file, written (Part.Write) and read back
// (ReadPart, ParsePart) strictly, in this format or an older one named;
// shard_check.go checks that what it says is a sweep's.

package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kgrepl/kgrepl/sim"
)

// The shard file: JSON lines. A header (the format, the shard and the
// sweep), one row per branch in index order, and an end line with the row
// count, so that a file cut short is refused. encoding/json sorts map keys,
// so the same shard gives the same bytes on every machine.
const shardFormat = "kgrepl explore shard v3"

// shardFormatV1 is the format before rows carried their unavailability
// and health: such a file cannot make the report this kgrepl prints.
const shardFormatV1 = "kgrepl explore shard v1"

// shardFormatV2 is the format before the sweep carried its world's
// partitions (a v2 file's counts were checked against 1,000 partitions,
// the kernel's limit when v2 was written, which refused the shards of
// bigger worlds).
const shardFormatV2 = "kgrepl explore shard v2"

type shardHeader struct {
	Format string `json:"format"`
	Shard  string `json:"shard"`
	Sweep  Sweep  `json:"sweep"`
}

type shardRow struct {
	Branch     int            `json:"branch"`
	Tick       int            `json:"tick"`
	Fault      string         `json:"fault"`
	Member     string         `json:"member"`
	Classes    map[string]int `json:"classes"`
	Duplicates []string       `json:"duplicates,omitempty"`
	Lost       []string       `json:"lost,omitempty"`
	Ran        int            `json:"ticks"`
	Log        []string       `json:"log,omitempty"`
	// The partition-ticks nobody could consume by cause (sim.Causes'
	// order), and the health at the end in words.
	Unavailable []int  `json:"unavailable"`
	Health      string `json:"health"`
}

type shardEnd struct {
	End int `json:"end"` // rows
}

// Write writes the part as a shard file.
func (p *Part) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(shardHeader{Format: shardFormat, Shard: fmt.Sprintf("%d/%d", p.K, p.N), Sweep: p.Sweep}); err != nil {
		return err
	}
	for j, o := range p.Outcomes {
		row := shardRow{Branch: p.Index[j], Tick: o.Tick, Fault: o.Fault.Kind, Member: o.Fault.Member, Classes: o.Classes,
			Duplicates: o.Duplicates, Lost: o.Lost, Ran: o.Ran, Log: o.Log, Health: o.Health, Unavailable: []int{}}
		for _, c := range sim.Causes {
			row.Unavailable = append(row.Unavailable, o.Unavailable[c])
		}
		if err := enc.Encode(row); err != nil {
			return err
		}
	}
	return enc.Encode(shardEnd{End: len(p.Outcomes)})
}

// ReadPart reads a shard file that Write wrote.
func ReadPart(r io.Reader) (*Part, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return ParsePart(data)
}

// ParsePart reads a shard file's bytes. It copies nothing but what the
// Part keeps: lines are read in place, and the header (whose script may be
// most of a file of hundreds of megabytes) is decoded once, straight from
// the bytes; a json.Decoder would have copied it into its buffer first.
func ParsePart(data []byte) (*Part, error) {
	line := 0
	rest := data
	next := func() ([]byte, bool) {
		if len(rest) == 0 {
			return nil, false
		}
		line++
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		return bytes.TrimSuffix(l, []byte("\r")), true // as bufio.ScanLines read them
	}
	first, ok := next()
	var h shardHeader
	if ok {
		if err := decodeHeader(first, &h); err != nil {
			return nil, fmt.Errorf("not a shard file of explore --shard (%v)", err)
		}
	}
	if !ok || h.Format != shardFormat {
		if h.Format == shardFormatV1 {
			return nil, fmt.Errorf("a shard file of an older kgrepl (%q, without each branch's unavailability and health): run its shard again with this one", shardFormatV1)
		}
		if h.Format == shardFormatV2 {
			return nil, fmt.Errorf("a shard file of an older kgrepl (%q, without its world's partitions): run its shard again with this one", shardFormatV2)
		}
		return nil, fmt.Errorf("not a shard file of explore --shard (its first line is not a %q header)", shardFormat)
	}
	k, n, err := ParseShard(h.Shard)
	if err != nil {
		return nil, fmt.Errorf("line 1: %v", err)
	}
	if err := h.Sweep.check(); err != nil {
		return nil, fmt.Errorf("line 1: %v", err)
	}
	p := &Part{K: k, N: n, Sweep: h.Sweep}
	for {
		text, ok := next()
		if !ok {
			return nil, fmt.Errorf("cut short after line %d: no end line (%d rows read)", line, len(p.Outcomes))
		}
		if bytes.HasPrefix(text, []byte(`{"end":`)) {
			var e shardEnd
			if err := json.Unmarshal(text, &e); err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			if e.End != len(p.Outcomes) {
				return nil, fmt.Errorf("line %d: the end line counts %d rows, the file has %d", line, e.End, len(p.Outcomes))
			}
			if _, more := next(); more {
				return nil, fmt.Errorf("line %d: text after the end line", line)
			}
			return p, nil
		}
		var row shardRow
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if row.Classes == nil {
			row.Classes = map[string]int{}
		}
		if err := row.check(h.Sweep); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		p.Index = append(p.Index, row.Branch)
		o := Outcome{Tick: row.Tick, Fault: Fault{Kind: row.Fault, Member: row.Member}, Classes: row.Classes,
			Duplicates: row.Duplicates, Lost: row.Lost, Ran: row.Ran, Log: row.Log, Health: row.Health}
		for k, c := range sim.Causes {
			o.Unavailable[c] = row.Unavailable[k]
		}
		p.Outcomes = append(p.Outcomes, o)
	}
}

// decodeHeader decodes a shard file's header line, refusing a field a
// header does not have (as json.Decoder.DisallowUnknownFields would)
// without the copy of the line a Decoder makes: the line is decoded in
// place, and its keys are checked in a second pass that keeps no value.
func decodeHeader(line []byte, h *shardHeader) error {
	if err := json.Unmarshal(line, h); err != nil {
		return err
	}
	var keys struct {
		top   map[string]skipJSON
		sweep struct {
			Sweep map[string]skipJSON `json:"sweep"`
		}
	}
	if err := json.Unmarshal(line, &keys.top); err != nil {
		return err
	}
	if err := json.Unmarshal(line, &keys.sweep); err != nil {
		return err
	}
	if k := unknownKey(keys.top, reflect.TypeFor[shardHeader]()); k != "" {
		return fmt.Errorf("json: unknown field %q", k)
	}
	if k := unknownKey(keys.sweep.Sweep, reflect.TypeFor[Sweep]()); k != "" {
		return fmt.Errorf("json: unknown field %q", k)
	}
	return nil
}

// UnmarshalJSON decodes a sweep as encoding/json does, but its script in
// one copy (scriptText): a string with escapes is first unquoted into a
// byte slice and then copied into a string, two copies of what may be
// most of a 256 MiB shard file.
func (sw *Sweep) UnmarshalJSON(data []byte) error {
	type plain Sweep
	var aux struct {
		*plain
		Prefix scriptText `json:"prefix"`
	}
	aux.plain = (*plain)(sw)
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	sw.Prefix = string(aux.Prefix)
	return nil
}

// scriptText is a JSON string decoded into one new string.
type scriptText string

// UnmarshalJSON unquotes a JSON string literal as encoding/json does
// (\uXXXX with surrogate pairs, invalid UTF-8 and lone surrogates as
// U+FFFD) into a strings.Builder of the literal's size: one allocation.
// json.Unmarshal has checked the literal is valid JSON before it calls
// this.
func (st *scriptText) UnmarshalJSON(data []byte) error {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return fmt.Errorf("the sweep's prefix is not a string")
	}
	data = data[1 : len(data)-1]
	var b strings.Builder
	b.Grow(len(data))
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\\' && i+1 < len(data):
			switch e := data[i+1]; {
			case jsonEscapes[e] != 0:
				b.WriteByte(jsonEscapes[e])
				i += 2
			case e == 'u':
				r, ok := hex4(data[i+2:])
				if !ok {
					return fmt.Errorf("the sweep's prefix: a bad \\u escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(-1), false
					if i+1 < len(data) && data[i] == '\\' && data[i+1] == 'u' {
						r2, ok2 = hex4(data[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						b.WriteRune(dec)
						i += 6
						break
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
			default:
				return fmt.Errorf("the sweep's prefix: a bad escape \\%c", e)
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(data[i : i+size])
			}
			i += size
		}
	}
	*st = scriptText(b.String())
	return nil
}

// jsonEscapes is the byte each one-letter escape stands for, as
// encoding/json unquotes them (which takes \' too), 0 for the others.
var jsonEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', '\'': '\'',
	'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// skipJSON takes any JSON value and keeps nothing of it.
type skipJSON struct{}

func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// unknownKey is a key of m that no field of t names, in sorted order; ""
// when there is none.
func unknownKey(m map[string]skipJSON, t reflect.Type) string {
	var bad []string
	for k := range m {
		found := false
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == k {
				found = true
			}
		}
		if !found {
			bad = append(bad, k)
		}
	}
	slices.Sort(bad)
	if len(bad) == 0 {
		return ""
	}
	return bad[0]
}
