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

// PartList is partList for the views.
func (w *World) PartList(tps []TopicPartition) string { return w.layout.PartList(tps) }

func planSummary(w *World, plan assign.Assignment, members []assign.Member) string {
	ids := make([]string, 0, len(members))
	for _, m := range members {
		ids = append(ids, m.MemberID)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = clientOf(id) + " " + w.layout.PartList(plan[id])
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
