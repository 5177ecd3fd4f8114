package coord

import (
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// TestMemberSetList: through random puts and drops, a memberSet's list is
// its map's values in member-id order; a list handed out before a change
// keeps what it had (the set makes its list anew, never changes it in
// place); a clone holds copies of its own, in the same order.
func TestMemberSetList(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	s := newMemberSet[ClassicMember]()
	var bufs []ClassicMember
	for step := range 2000 {
		before := s.list()
		ids := idsOf(before)
		id := "C" + strconv.Itoa(r.Intn(30)) + "-1"
		if r.Intn(3) == 0 {
			s.drop(id)
		} else {
			s.put(id, &ClassicMember{MemberID: id, Inc: step})
		}
		if !slices.Equal(idsOf(before), ids) {
			t.Fatalf("step %d: a list handed out before the change changed", step)
		}
		want := make([]string, 0, len(s.byID))
		for k := range s.byID {
			want = append(want, k)
		}
		sort.Strings(want)
		if got := idsOf(s.list()); !slices.Equal(got, want) || s.len() != len(want) {
			t.Fatalf("step %d: list %v, map %v", step, got, want)
		}
		var c memberSet[ClassicMember]
		c, bufs = s.clone(nil, bufs, func(dst, src *ClassicMember) string { *dst = *src; return dst.MemberID })
		if !slices.Equal(idsOf(c.list()), want) {
			t.Fatalf("step %d: clone lists %v, want %v", step, idsOf(c.list()), want)
		}
		for i, m := range c.list() {
			if m == s.list()[i] || c.get(m.MemberID) != m || m.Inc != s.list()[i].Inc {
				t.Fatalf("step %d: clone's %s is not a copy of its own", step, m.MemberID)
			}
		}
	}
}

func idsOf(ms []*ClassicMember) []string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.MemberID)
	}
	return ids
}
