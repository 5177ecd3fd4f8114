package coord

import (
	"strconv"
	"strings"
	"testing"
)

// TestMemberListIsBounded: an event's member list spells out at most
// listedMembers ids and counts the rest, so a rebalance of a large group
// keeps a bounded text; a list within the bound is printed whole.
func TestMemberListIsBounded(t *testing.T) {
	ids := func(n int) []*string {
		var out []*string
		for i := 1; i <= n; i++ {
			s := "C" + strconv.Itoa(i) + "-1"
			out = append(out, &s)
		}
		return out
	}
	id := func(s *string) string { return *s }
	if got := memberIDs(ids(2), id); got != "[C1-1 C2-1]" {
		t.Errorf("two members: %s", got)
	}
	whole := memberIDs(ids(listedMembers), id)
	if strings.Count(whole, "-1") != listedMembers || strings.Contains(whole, "more") {
		t.Errorf("%d members: not listed whole: %.80s", listedMembers, whole)
	}
	big := memberIDs(ids(10_000), id)
	if !strings.HasPrefix(big, "[C1-1 C2-1 ") || !strings.HasSuffix(big, " C100-1 and 9900 more]") || len(big) > 1000 {
		t.Errorf("10,000 members: %d bytes, %.40s...%s", len(big), big, big[max(0, len(big)-40):])
	}
}
