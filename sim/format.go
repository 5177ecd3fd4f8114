package sim

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/assign"
)

func itoa(n int) string { return strconv.Itoa(n) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedKeys(m map[TopicPartition]int) []TopicPartition {
	ks := make([]TopicPartition, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	assign.SortPartitions(ks)
	return ks
}

// partList names partitions the seed's way: {o0 o1 p0}.
func partList(w *World, tps []TopicPartition) string {
	return string(appendPartList(w, make([]byte, 0, 6*len(tps)+2), tps))
}

// appendPartList appends partList(w, tps) to b, sorting a copy only when
// tps is not sorted already.
func appendPartList(w *World, b []byte, tps []TopicPartition) []byte {
	b = append(b, '{')
	for i, tp := range sortedView(tps) {
		if i > 0 {
			b = append(b, ' ')
		}
		b = w.layout.AppendShortName(b, tp)
	}
	return append(b, '}')
}

// PartList is partList for the views.
func (w *World) PartList(tps []TopicPartition) string { return partList(w, tps) }

func planSummary(w *World, plan assign.Assignment, members []assign.Member) string {
	ids := make([]string, 0, len(members))
	for _, m := range members {
		ids = append(ids, m.MemberID)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = clientOf(id) + " " + partList(w, plan[id])
	}
	return strings.Join(parts, " · ")
}

// clientOf turns a member id C2-3 into its client id C2.
func clientOf(memberID string) string {
	if i := strings.LastIndexByte(memberID, '-'); i > 0 {
		return memberID[:i]
	}
	return memberID
}

// offsetSummary is "o0@3 o1@5": built in one buffer, as it is written for
// every commit and fetch.
func offsetSummary(w *World, tps []TopicPartition, offs []int) string {
	return string(appendOffsets(w, make([]byte, 0, 8*len(tps)), tps, offs))
}

func appendOffsets(w *World, b []byte, tps []TopicPartition, offs []int) []byte {
	for i, tp := range tps {
		if i > 0 {
			b = append(b, ' ')
		}
		b = w.layout.AppendShortName(b, tp)
		b = append(b, '@')
		b = strconv.AppendInt(b, int64(offs[i]), 10)
	}
	return b
}
