package repl

import (
	"reflect"
	"testing"
)

// listEngine completes with a fixed answer, whatever the line.
type listEngine struct {
	fakeEngine
	answer []string
	got    string
	panics bool
}

func (l *listEngine) Complete(line string) []string {
	l.got = line
	if l.panics {
		panic("boom")
	}
	return l.answer
}

func strs(rs [][]rune) []string {
	var s []string
	for _, r := range rs {
		s = append(s, string(r))
	}
	return s
}

func TestCompleterSuffixes(t *testing.T) {
	cases := []struct {
		name   string
		line   string
		pos    int // -1: end of line
		answer []string
		want   []string
		length int
		sent   string // what the engine must be asked about
	}{
		{"one word", "ec", -1, []string{"echo"}, []string{"ho "}, 2, "ec"},
		{"second word, shared prefix", "show co", -1, []string{"config", "consumers"}, []string{"nfig ", "nsumers "}, 2, "show co"},
		{"after a space", "show ", -1, []string{"config", "consumers"}, []string{"config ", "consumers "}, 0, "show "},
		{"word already complete", "count", -1, []string{"count"}, []string{" "}, 5, "count"},
		{"after ';'", "step;desc", -1, []string{"describe"}, []string{"ribe "}, 4, "step;desc"},
		{"after ',' the word is empty", "join C3 --topics orders,", -1, []string{"payments"}, []string{"payments "}, 0, "join C3 --topics orders,"},
		{"no space after a prefix-like candidate", "set C", -1, []string{"C1."}, []string{"1."}, 1, "set C"},
		{"cursor mid-line, space follows", "ec hello", 2, []string{"echo"}, []string{"ho"}, 2, "ec"},
		{"candidate that does not extend the word is dropped", "desc", -1, []string{"Describe", "describe"}, []string{"ribe "}, 4, "desc"},
		{"nothing to offer", "zz", -1, nil, nil, 0, "zz"},
		{"multibyte runes", "echo é", -1, []string{"été"}, []string{"té "}, 1, "echo é"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := &listEngine{answer: c.answer}
			line := []rune(c.line)
			pos := c.pos
			if pos < 0 {
				pos = len(line)
			}
			got, length := completer{eng}.Do(line, pos)
			if eng.got != c.sent {
				t.Errorf("engine asked about %q, want %q (the line up to the cursor)", eng.got, c.sent)
			}
			if !reflect.DeepEqual(strs(got), c.want) || length != c.length {
				t.Errorf("Do(%q, %d) = %q, %d; want %q, %d", c.line, pos, strs(got), length, c.want, c.length)
			}
		})
	}
}

func TestCompleterSurvivesEnginePanic(t *testing.T) {
	got, length := completer{&listEngine{panics: true}}.Do([]rune("x"), 1)
	if got != nil || length != 0 {
		t.Errorf("got %q, %d; want no candidates", strs(got), length)
	}
}
