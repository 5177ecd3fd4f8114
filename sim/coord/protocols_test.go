package coord

import "testing"

// supportsProtocols keeps the members' distinct lists from one join to
// the next, and must see a member's list replaced in place (a rejoin
// with another list, ReplaceProtocols) as well as members added and
// dropped: a list that no longer every member lists is refused.
func TestSupportsProtocolsSeesListsReplacedInPlace(t *testing.T) {
	c := testGroup()
	g := c.group.(*ClassicGroup)
	both := []string{"range", "roundrobin"}
	for _, id := range []string{"A", "B"} {
		g.members.put(id, &ClassicMember{MemberID: id, ClientID: id,
			ClassicMemberMetadata: ClassicMemberMetadata{Protocols: g.sharedProtocols(both)}})
	}
	g.state = Stable
	rr := []string{"roundrobin"}
	if !g.supportsProtocols(rr) {
		t.Fatal("roundrobin, which both members list, refused")
	}
	g.setProtocols(g.members.get("A"), []string{"range"}) // A rejoins with range alone
	if g.supportsProtocols(rr) {
		t.Fatal("roundrobin accepted after A's rejoin with range alone")
	}
	g.setProtocols(g.members.get("A"), []string{"range", "roundrobin"})
	if !g.supportsProtocols(rr) {
		t.Fatal("roundrobin refused after A's rejoin with it again")
	}
	c.ReplaceProtocols(func(client string) []string { return []string{"sticky"} })
	if g.supportsProtocols(rr) || !g.supportsProtocols([]string{"sticky"}) {
		t.Fatal("the lists replaced by ReplaceProtocols not seen")
	}
	g.members.put("C", &ClassicMember{MemberID: "C", ClientID: "C",
		ClassicMemberMetadata: ClassicMemberMetadata{Protocols: []string{"range"}}})
	if g.supportsProtocols([]string{"sticky"}) {
		t.Fatal("sticky accepted with C, who lists range alone, a member")
	}
	g.members.drop("C")
	if !g.supportsProtocols([]string{"sticky"}) {
		t.Fatal("sticky refused after C left")
	}
}
