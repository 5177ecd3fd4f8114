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
	s := append([]TopicPartition{}, tps...)
	assign.SortPartitions(s)
	names := make([]string, len(s))
	for i, tp := range s {
		names[i] = w.ShortName(tp)
	}
	return "{" + strings.Join(names, " ") + "}"
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

// offsetSummary spells offsets as "o0@3 o1@5" (ShortName@offset).
func offsetSummary(w *World, tps []TopicPartition, offs []int) string {
	var b strings.Builder
	writeOffsetSummary(&b, w, tps, offs)
	return b.String()
}

// writeOffsetSummary writes offsetSummary into b, with one allocation for
// the whole text however many partitions (commits of thousands of them).
func writeOffsetSummary(b *strings.Builder, w *World, tps []TopicPartition, offs []int) {
	n := 0
	for _, tp := range tps {
		n += len(tp.Topic) + 12
	}
	b.Grow(n + 40)
	var num [20]byte
	for i, tp := range tps {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.short {
			b.WriteString(tp.Topic[:1])
		} else {
			b.WriteString(tp.Topic)
			b.WriteByte('-')
		}
		b.Write(strconv.AppendInt(num[:0], int64(tp.Partition), 10))
		b.WriteByte('@')
		b.Write(strconv.AppendInt(num[:0], int64(offs[i]), 10))
	}
}

func fetchSummary(w *World, r *fetchReq) string {
	return offsetSummary(w, r.Partitions, r.Offsets) + " max " + strconv.Itoa(r.Max)
}
