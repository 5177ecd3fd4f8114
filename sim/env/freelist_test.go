package env

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// A Fetch request the leader held and let go of unanswered goes back to
// the free lists, packet and body, and comes out again; an answer, a
// packet of another kind, one stamped before a clone (shared with the
// copy) and any in a world that keeps its packets stay where they are.
func TestDroppedHeldFetchGoesBack(t *testing.T) {
	e := &Env{freeLists: newFreeLists()}
	held := func() (*wire.Packet, *wire.FetchRequest) {
		p, r := e.Packet(), e.NewFetchRequest()
		p.Type, p.Body = wire.Fetch, r
		return p, r
	}
	p, r := held()
	e.DropHeldFetch(p)
	if got := e.FreeListsForTest(); got[0] != 1 || got[1] != 1 {
		t.Fatalf("free lists %v after a held Fetch was dropped, want its packet and request back", got)
	}
	if e.NewFetchRequest() != r || e.Packet() != p {
		t.Fatal("the dropped Fetch's request and packet were not handed out again")
	}

	answer, _ := held()
	answer.Response = true
	commit := e.Packet()
	commit.Type = wire.OffsetCommit
	e.DropHeldFetch(answer)
	e.DropHeldFetch(commit)
	old, _ := held()
	e.freeLists.renew() // as Clone does: old may be shared with the copy now
	e.DropHeldFetch(old)
	if got := e.FreeListsForTest(); got != [7]int{} {
		t.Fatalf("free lists %v: an answer, an OffsetCommit or a request alive at a clone went back", got)
	}

	e.KeepForTest()
	kept, _ := held()
	e.DropHeldFetch(kept)
	if got := e.FreeListsForTest(); got != [7]int{} {
		t.Fatalf("free lists %v: a world that keeps its packets took one back", got)
	}
}
