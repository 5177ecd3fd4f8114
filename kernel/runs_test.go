package kernel

import (
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// TestRunsSpellLongListsOnly: a list of up to 32 partitions or members
// reads one name each, as it always has; a longer one reads its runs of
// three or more as first..last, and those spell back the very list.
func TestRunsSpellLongListsOnly(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics a:40,b:5 --members 1")
	w := s.World()
	in := w.Layout().Inputs()
	short := in[:32]
	if got, want := partRuns(w, short), w.Layout().PartList(short); got != want {
		t.Errorf("32 partitions: %s, want %s", got, want)
	}
	// a-0..a-39 less a-5 and a-7, then b-0..b-4 less b-2: runs of 1, 2
	// and 3+ in both topics, given out of order.
	var pick []sim.TopicPartition
	for i := len(in) - 1; i >= 0; i-- {
		tp := in[i]
		if tp.Topic == "a" && (tp.Partition == 5 || tp.Partition == 7) || tp.Topic == "b" && tp.Partition == 2 {
			continue
		}
		pick = append(pick, tp)
	}
	want := "{a-0..a-4 a-6 a-8..a-39 b-0 b-1 b-3 b-4}"
	if got := partRuns(w, pick); got != want {
		t.Errorf("partRuns = %s, want %s", got, want)
	}
	// Scattered: every other partition of 200 is 100 runs; 64 of them
	// are spelled.
	s2 := NewSession()
	runLines(t, s2, "new --topics a:200 --members 1")
	var odd []sim.TopicPartition
	for _, tp := range s2.World().Layout().Inputs() {
		if tp.Partition%2 == 1 {
			odd = append(odd, tp)
		}
	}
	got := partRuns(s2.World(), odd)
	if !strings.HasPrefix(got, "{a-1 a-3 a-5 ") || !strings.HasSuffix(got, " a-125 a-127 … 36 more}") || strings.Count(got, " ")-2 != 64 {
		t.Errorf("100 scattered partitions: %s, want the first 64 and … 36 more", got)
	}
	members := strings.Fields("C1 C2 C3 C5 C6 C8 C9 C10 C11 C12 C13 C14 C15 C16 C17 C18 C19 C20 C21 C22 C23 C24 C25 C26 C27 C28 C29 C30 C31 C32 C33 C34 C35 C40")
	if got, want := memberRuns(members[:32]), strings.Join(members[:32], " "); got != want {
		t.Errorf("32 members: %s, want %s", got, want)
	}
	if got, want := memberRuns(members), "C1..C3 C5 C6 C8..C35 C40"; got != want {
		t.Errorf("memberRuns = %s, want %s", got, want)
	}
}

// TestShowTrafficRuns: past 32 partitions, show traffic's rows of
// consecutive partitions of one topic that read alike are one row
// (first..last), broken where a partition's rate, start or counts
// differ or the topic changes; up to 32 keep a row each.
func TestShowTrafficRuns(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --topics t:40,u:3 --members 1\nproduce --rate 1/2ticks t\nproduce --rate 1/5ticks u\nproduce --rate 1/3ticks t-7\nstep 10")
	out, err := s.Exec("show traffic")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] != "PARTITION" && !strings.HasPrefix(l, "tick ") {
			names = append(names, f[0])
		}
	}
	if got, want := strings.Join(names, " "), "t-0..t-6 t-7 t-8..t-39 u-0..u-2"; got != want {
		t.Errorf("show traffic of 43 partitions lists %s, want %s:\n%s", got, want, out)
	}
	s2 := NewSession()
	runLines(t, s2, "new --topics t:32 --members 1\nproduce --rate 1/2ticks t\nstep 4")
	out, err = s2.Exec("show traffic")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "..") || strings.Count(out, "\nt-") != 32 {
		t.Errorf("show traffic of 32 partitions should list each:\n%s", out)
	}
}
