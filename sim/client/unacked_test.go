package client

import (
	"math/rand"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// unackedReqs answers as the map[int]*produceReq it replaced over random
// sends (new IDs, only growing, as nextID issues them), retries (a new
// request under an ID in flight), answers of IDs in flight or not, and
// copies as World.Clone makes them (cutInto, two copies side by side in
// one array), which must never see each other's changes.
func TestPropertyUnackedAsMap(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		type pair struct {
			u   unackedReqs
			ref map[int]*wire.ProduceRequest
			ids []int // in flight, for picking one
		}
		fam := []*pair{{ref: map[int]*wire.ProduceRequest{}}}
		nextID := 0
		for i := 0; i < 1000; i++ {
			p := fam[r.Intn(len(fam))]
			switch op := r.Intn(10); {
			case op < 4:
				nextID++
				req := &wire.ProduceRequest{ID: nextID}
				p.u.put(req)
				p.ref[req.ID] = req
				p.ids = append(p.ids, req.ID)
			case op < 5 && len(p.ids) > 0:
				id := p.ids[r.Intn(len(p.ids))]
				req := &wire.ProduceRequest{ID: id, Attempt: 1}
				p.u.put(req)
				p.ref[id] = req
			case op < 8:
				id := 1 + r.Intn(nextID+2)
				p.u.del(id)
				delete(p.ref, id)
			case op == 8 && len(fam) < 12:
				buf := make([]*wire.ProduceRequest, 0, 2*len(p.u))
				live := store.CutInto(&buf, p.u)
				c := &pair{u: store.CutInto(&buf, p.u), ref: store.CopyMap(p.ref), ids: append([]int(nil), p.ids...)}
				p.u = live
				fam = append(fam, c)
			}
			check := fam
			if i%50 != 0 {
				check = []*pair{p}
			}
			for _, q := range check {
				if len(q.u) != len(q.ref) {
					t.Fatalf("seed %d, op %d: %d requests, the map has %d", seed, i, len(q.u), len(q.ref))
				}
				for id := 0; id <= nextID+1; id++ {
					if got, want := q.u.get(id), q.ref[id]; got != want {
						t.Fatalf("seed %d, op %d: get(%d) = %v, want %v", seed, i, id, got, want)
					}
				}
			}
		}
	}
}
