package kernel

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// spelledWhole is how many partitions or members a view's list spells one
// by one; past it, each run of three or more consecutive ones reads as
// first..last. The page's lists (a few partitions, a few members) are far
// below it and print as they always have; a rebalance of a big world
// pauses thousands of partitions at once, where one name each made a
// metrics row of 700 KB (100 members over 100,000 partitions).
const spelledWhole = 32

// spelledRuns is how many runs a long list spells before it says how
// many partitions it left out: a scattered list (the uniform assignor's
// share of 100,000 partitions) has as many runs as partitions. The --json
// forms of the views list them all.
const spelledRuns = 64

// partRuns spells partitions as Layout.PartList does ({o0 o1 p2}), and a
// list longer than spelledWhole with its runs of consecutive partitions
// of one topic as first..last, the first spelledRuns runs of them:
// {t-0..t-9090 t-9092 u-3..u-7}, {t-0 t-2 ... t-126 … 4,937 more}.
func partRuns(w *sim.World, tps []sim.TopicPartition) string {
	l := w.Layout()
	if len(tps) <= spelledWhole {
		return l.PartList(tps)
	}
	sorted := slices.Clone(tps)
	slices.SortFunc(sorted, func(a, b sim.TopicPartition) int {
		if a.Topic != b.Topic {
			return strings.Compare(a.Topic, b.Topic)
		}
		return a.Partition - b.Partition
	})
	b := []byte{'{'}
	for i, runs := 0, 0; i < len(sorted); runs++ {
		if runs == spelledRuns {
			b = append(b, " … "...)
			b = append(b, group(len(sorted)-i)...)
			b = append(b, " more"...)
			break
		}
		j := i + 1
		for j < len(sorted) && sorted[j].Topic == sorted[i].Topic && sorted[j].Partition == sorted[j-1].Partition+1 {
			j++
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = l.AppendShortName(b, sorted[i])
		switch {
		case j-i >= 3:
			b = l.AppendShortName(append(b, ".."...), sorted[j-1])
		case j-i == 2:
			b = l.AppendShortName(append(b, ' '), sorted[j-1])
		}
		i = j
	}
	return string(append(b, '}'))
}

// memberRuns spells client ids separated by spaces, and a list longer
// than spelledWhole with its runs of consecutive client numbers as
// Cn..Cm, the form `roll` reads: C1..C100.
func memberRuns(members []string) string {
	if len(members) <= spelledWhole {
		return strings.Join(members, " ")
	}
	num := func(c string) int {
		if !sim.IsClientID(c) {
			return -1
		}
		n, _ := strconv.Atoi(c[1:])
		return n
	}
	var parts []string
	for i := 0; i < len(members); {
		j := i + 1
		for j < len(members) && num(members[j-1]) >= 0 && num(members[j]) == num(members[j-1])+1 {
			j++
		}
		switch {
		case j-i >= 3:
			parts = append(parts, members[i]+".."+members[j-1])
		default:
			parts = append(parts, members[i:j]...)
		}
		i = j
	}
	return strings.Join(parts, " ")
}
