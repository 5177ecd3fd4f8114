package env

import (
	"reflect"
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

type holdsNone struct{}

func (holdsNone) HoldsProduce(*wire.Packet, *wire.ProduceRequest) bool { return false }

// A Produce request taken back with its answer comes out again zero but
// for its epoch and its runs' array, empty (NewProduceRequest: the
// producer fills in only what a request of its own sets).
func TestRecycledProduceRequestComesBackZero(t *testing.T) {
	e := &Env{freeLists: newFreeLists()}
	req := e.NewProduceRequest()
	*req = wire.ProduceRequest{ID: 7, TP: wire.TopicPartition{Topic: "out", Partition: 1}, Value: "inv(x)", Source: "x",
		PID: 1000, Epoch: 2, Seq: 40, Txn: true, Producer: "C1", Attempt: 1, InFlight: 3, NoInFlightLimit: true,
		Src: wire.TopicPartition{Topic: "t0", Partition: 2}, SrcOffset: 5, HasSrc: true, Named: true, SrcTPI: 3, TPI: 9,
		SrcCount: 2, SrcEnd: 6, Runs: []wire.SrcRun{{Part: 2, First: 5, Last: 6, Count: 2, From: 5, To: 6}}, FreeEpoch: req.FreeEpoch}
	runs := &req.Runs[:1][0]
	p := e.Packet()
	p.Type, p.Body = wire.Produce, req
	answer := e.Packet()
	answer.Type, answer.Response, answer.Req, answer.Body = wire.Produce, true, p, e.NewProduceResponse()
	e.Recycle(answer, holdsNone{})
	got := e.NewProduceRequest()
	if got != req {
		t.Fatal("the answered request was not handed out again")
	}
	if len(got.Runs) != 0 || cap(got.Runs) == 0 || &got.Runs[:1][0] != runs {
		t.Fatalf("its runs' array came back as %v (cap %d), want the request's own, empty", got.Runs, cap(got.Runs))
	}
	want := wire.ProduceRequest{Runs: got.Runs, FreeEpoch: e.freeLists.current()}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("a recycled request came back as %+v, want zero but its epoch and runs", *got)
	}
}
