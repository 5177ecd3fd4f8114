package kafkafmt

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
)

func entriesText(p *Properties) string {
	var parts []string
	for _, e := range p.Entries {
		parts = append(parts, fmt.Sprintf("%d:%q=%q", e.Line, e.Key, e.Value))
	}
	return strings.Join(parts, " ")
}

// TestParseProperties: java.util.Properties.load's rules, case by case.
func TestParseProperties(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a=b", `1:"a"="b"`},
		{"a = b\n", `1:"a"="b"`},
		{"a:b\nc : d", `1:"a"="b" 2:"c"="d"`},
		{"a b", `1:"a"="b"`},
		{"a \t =  b  ", `1:"a"="b  "`}, // trailing blanks are kept in the value
		{"a==b", `1:"a"="=b"`},
		{"a = = b", `1:"a"="= b"`},
		{"a", `1:"a"=""`},
		{"a=", `1:"a"=""`},
		{"   indented.key=v", `1:"indented.key"="v"`},
		{"# comment\n! also\n  # indented\nk=v", `4:"k"="v"`},
		{"k=v # not a comment", `1:"k"="v # not a comment"`},
		{"k=a\\\n   b\\\n\tc", `1:"k"="abc"`},
		{"k=a\\\\\nb=c", `1:"k"="a\\" 2:"b"="c"`}, // an even run of backslashes does not continue
		{"k=a\\\n\nb=c", `1:"k"="a" 3:"b"="c"`},   // a continuation line that is empty ends it
		{"# comment \\\nk=v", `2:"k"="v"`},        // a comment does not continue
		{"k=\\t\\n\\r\\f\\u0041\\x\\=", `1:"k"="\t\n\r\fAx="`},
		{"k\\ ey=v", `1:"k ey"="v"`},
		{"k\\=ey=v", `1:"k=ey"="v"`},
		{"k=\\u00e9t\\u00E9", `1:"k"="été"`},
		{"a=1\r\nb=2\rc=3\n\nd=4", `1:"a"="1" 2:"b"="2" 3:"c"="3" 5:"d"="4"`},
		{"a=1\nb=2\na=3", `1:"a"="1" 2:"b"="2" 3:"a"="3"`},
		{"k=v\\", `1:"k"="v"`}, // a backslash at the end of the file is dropped
		{"# café\nk=v", `2:"k"="v"`},
		{"", ``},
		{"\n\n  \t\f\n", ``},
	}
	for _, c := range cases {
		p, err := ParseProperties(strings.NewReader(c.in))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := entriesText(p); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	p, _ := ParseProperties(strings.NewReader("a=1\nb=2\na=3"))
	if e, ok := p.Get("a"); !ok || e.Value != "3" || e.Line != 3 {
		t.Errorf("Get(a) = %+v %v, want the last entry", e, ok)
	}
	if keys := strings.Join(p.Keys(), ","); keys != "a,b" {
		t.Errorf("Keys() = %s", keys)
	}
}

func TestParsePropertiesRefusals(t *testing.T) {
	cases := []struct{ in, want string }{
		{"\xef\xbb\xbfbootstrap.servers=x", "line 1: the file starts with a UTF-8 byte-order mark"},
		{"a=1\nclient.id=caf\xc3\xa9", "line 2: byte 0xC3 is not ASCII"},
		{"k=\\u12", "line 1: a malformed \\uxxxx escape"},
		{"a=1\nk=\\u12G4", `line 2: a malformed \uxxxx escape "\\u12G4"`},
		{strings.Repeat("#", MaxPropertiesBytes+1), "more than 1 MiB"},
		{strings.Repeat("k=v\n", MaxPropertiesEntries+1), fmt.Sprintf("line %d: more than %d entries", MaxPropertiesEntries+1, MaxPropertiesEntries)},
	}
	for _, c := range cases {
		_, err := ParseProperties(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: got %v, want %q", c.in, err, c.want)
		}
	}
}

// TestParsePropertiesAgainstJava compares ParseProperties with
// java.util.Properties.load itself on random files made of the characters
// its rules turn on (skipped where no java is installed).
func TestParsePropertiesAgainstJava(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java on PATH: the reference is java.util.Properties")
	}
	pieces := []string{"a", "b", "k", "=", ":", " ", "\t", "\f", "\\", "\\", "\n", "\r", "\r\n", "#", "!", "u", "0", "4", "F", "t", "n", "f", "r", "x", "\\u0041", "\\u00e9", "\\u20AC", "\\u12"}
	r := rand.New(rand.NewPCG(1, 2))
	var inputs []string
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for j, n := 0, r.IntN(40); j < n; j++ {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	var stdin bytes.Buffer
	for _, in := range inputs {
		stdin.WriteString(base64.StdEncoding.EncodeToString([]byte(in)) + "\n")
	}
	cmd := exec.Command(java, "testdata/java/PropertiesOracle.java")
	cmd.Stdin = &stdin
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("java answered %d of %d inputs", len(lines), len(inputs))
	}
	for i, in := range inputs {
		want := lines[i]
		p, err := ParseProperties(strings.NewReader(in))
		got := "ERR"
		if err == nil {
			got = javaView(p)
		}
		if got != want {
			t.Fatalf("%q:\n got %s\njava %s (err %v)", in, got, want, err)
		}
	}
}

// javaView is p as the oracle prints a Properties: the last value of each
// key, sorted, in UTF-16 hex.
func javaView(p *Properties) string {
	last := map[string]string{}
	for _, e := range p.Entries {
		last[e.Key] = e.Value
	}
	keys := make([]string, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	hex := func(s string) string {
		var b strings.Builder
		for _, u := range utf16.Encode([]rune(s)) {
			fmt.Fprintf(&b, "%04x", u)
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteString("OK")
	for _, k := range keys {
		b.WriteString("," + hex(k) + "=" + hex(last[k]))
	}
	return b.String()
}
