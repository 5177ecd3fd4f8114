package explore

import (
	"encoding/json"
	"math/rand"
	"testing"
)

// TestScriptTextDecodesAsEncodingJSON: the sweep's script, decoded in one
// copy, is what encoding/json decodes, for escapes, surrogate pairs, lone
// surrogates, invalid UTF-8 and random strings.
func TestScriptTextDecodesAsEncodingJSON(t *testing.T) {
	literals := []string{`""`, `"new\njoin C2\nstep 14\n"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u00E9 é"`, `"\ud83d\ude00"`,
		`"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, "\"\xff\xfe a\"", "\"\xe2\x82\"", `"<&>"`, `"\u0000"`}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.Intn(40))
		for j := range b {
			b[j] = byte(r.Intn(256))
		}
		lit, _ := json.Marshal(string(b))
		literals = append(literals, string(lit))
		// The same with every non-ASCII byte escaped as \u, pairs included.
		var esc []byte
		for _, c := range string(b) {
			if c >= 0x80 {
				e, _ := json.Marshal(string(c))
				esc = append(esc, []byte(asciiEscape(string(e[1:len(e)-1])))...)
				continue
			}
			e, _ := json.Marshal(string(c))
			esc = append(esc, e[1:len(e)-1]...)
		}
		literals = append(literals, `"`+string(esc)+`"`)
	}
	for _, lit := range literals {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			continue // not a literal encoding/json takes
		}
		var got scriptText
		if err := got.UnmarshalJSON([]byte(lit)); err != nil || string(got) != want {
			t.Errorf("%q: got %q (%v), encoding/json %q", lit, string(got), err, want)
		}
	}
}

// asciiEscape writes each rune as \uXXXX (a pair past U+FFFF).
func asciiEscape(s string) string {
	out := ""
	for _, c := range s {
		if c > 0xFFFF {
			c -= 0x10000
			out += jsonU(0xD800+(c>>10)) + jsonU(0xDC00+(c&0x3FF))
			continue
		}
		out += jsonU(c)
	}
	return out
}

func jsonU(r rune) string {
	const hexd = "0123456789abcdef"
	return `\u` + string([]byte{hexd[r>>12&15], hexd[r>>8&15], hexd[r>>4&15], hexd[r&15]})
}
