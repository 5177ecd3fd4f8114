package client

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// partInts answers as map[wire.TopicPartition]int over random gets, sets,
// deletes (one, or many at once: delAll), resets and clones, with right,
// wrong and no slot hints, for partitions the world numbers and others (a
// topic it does not have, a partition past its topic's), with the world's
// numbering and without, and spells itself as fmt spells the map.
func TestPropertyPartIntsAsMap(t *testing.T) {
	hinted := 0 // refHinted's answers, checked in op 17
	defer func() {
		if hinted == 0 && !t.Failed() {
			t.Error("refHinted never answered")
		}
	}()
	for seed := int64(0); seed < 60; seed++ {
		r := rand.New(rand.NewSource(seed))
		n := 1 + r.Intn(40)
		layout := topo.New(topo.Topology{Group: "g", Inputs: []topo.TopicSpec{{Name: "payments", Partitions: n}, {Name: "orders", Partitions: n}}, Output: topo.TopicSpec{Name: "out", Partitions: 1}})
		var p partInts
		if seed%3 != 0 {
			p.useIndex(layout.Input())
		}
		x := layout.Input()
		ref := map[wire.TopicPartition]int{}
		var frozen []partInts // clones, each with the map it must still be
		var frozenRef []map[wire.TopicPartition]int
		for i := 0; i < 800; i++ {
			tp := wire.TopicPartition{Topic: []string{"orders", "payments", "x"}[r.Intn(3)], Partition: r.Intn(n + 2)}
			hint := int32(-1)
			switch r.Intn(3) {
			case 0:
				hint = x.SlotsOf(nil, []wire.TopicPartition{tp})[0]
			case 1:
				hint = int32(r.Intn(2*n+3) - 1)
			}
			switch op := r.Intn(20); {
			case op < 5:
				v := r.Intn(1000)
				p.set(tp, v)
				ref[tp] = v
			case op < 9:
				v := r.Intn(1000)
				p.setHint(tp, hint, v)
				ref[tp] = v
			case op < 12:
				p.delAll([]wire.TopicPartition{tp})
				delete(ref, tp)
			case op == 12:
				p.reset()
				ref = map[wire.TopicPartition]int{}
			case op == 13:
				// Copied as World.Clone copies, into one array: p goes on as
				// the first copy, right before a frozen one, which its sets,
				// inserts and deletes must leave alone.
				buf := make([]partInt, 0, 2*len(p.es))
				live := p.cloneIn(&buf)
				frozen = append(frozen, p.cloneIn(&buf))
				frozenRef = append(frozenRef, store.CopyMap(ref))
				p = live
			case op == 15 || op == 16:
				// a revocation: any partitions, numbered or not, held or
				// not, repeated, in any order
				var list []wire.TopicPartition
				for k := r.Intn(2 * n); k > 0; k-- {
					list = append(list, wire.TopicPartition{Topic: []string{"orders", "payments", "x"}[r.Intn(3)], Partition: r.Intn(n + 2)})
				}
				p.delAll(list)
				for _, lt := range list {
					delete(ref, lt)
				}
			case op == 17:
				// a Fetch's answer: a list mostly in (topic, partition)
				// order, each held partition's value read and moved on
				// through refSlot with its cursor, as onFetchResponse
				// does; one it does not answer (not numbered, not held)
				// is not held
				var list []wire.TopicPartition
				for _, topic := range []string{"orders", "payments", "x"} {
					for q := 0; q < n+2; q++ {
						if r.Intn(3) == 0 {
							list = append(list, wire.TopicPartition{Topic: topic, Partition: q})
						}
					}
				}
				if len(list) > 1 && r.Intn(2) == 0 {
					a, b := r.Intn(len(list)), r.Intn(len(list))
					list[a], list[b] = list[b], list[a]
				}
				hints := randomHints(r, x, list)
				at, hintedAt, getAt := 0, 0, 0
				for j, lt := range list {
					want, wok := ref[lt]
					// getHinted is getSlot(slotOf), its cursor its own
					gv, gk, gok := p.getHinted(lt, topo.SlotAt(hints, j), &getAt)
					sk := p.slotOf(lt, topo.SlotAt(hints, j))
					if sv, sok := p.getSlot(lt, sk, new(int)); gv != sv || gok != sok || (gok && gk != sk) {
						t.Fatalf("seed %d, op %d: getHinted(%v, %d) = %d %d %v, getSlot(slotOf) %d %d %v", seed, i, lt, topo.SlotAt(hints, j), gv, gk, gok, sv, sk, sok)
					}
					// refHinted, when it answers, is refSlot(slotOf) without
					// the numbering: right, wrong and no hints alike
					if hv := p.refHinted(lt, topo.SlotAt(hints, j), &hintedAt); hv != nil {
						if other := p.refSlot(p.slotOf(lt, topo.SlotAt(hints, j)), new(int)); hv != other {
							t.Fatalf("seed %d, op %d: refHinted(%v, %d) is not refSlot(slotOf)", seed, i, lt, topo.SlotAt(hints, j))
						}
						hinted++
					}
					v := p.refSlot(p.slotOf(lt, topo.SlotAt(hints, j)), &at)
					if v == nil {
						if wok && p.slotOf(lt, topo.SlotAt(hints, j)) >= 0 {
							t.Fatalf("seed %d, op %d: refSlot(%v) nil, the map holds %d", seed, i, lt, want)
						}
						continue
					}
					if !wok || *v != want {
						t.Fatalf("seed %d, op %d: refSlot(%v) = %d, want %d %v", seed, i, lt, *v, want, wok)
					}
					*v = want + 1
					ref[lt] = want + 1
				}
			case op == 14:
				// a list in (topic, partition) order, read and then written
				// with seek's cursor, as the auto-commit does
				var list []wire.TopicPartition
				for _, topic := range []string{"orders", "payments", "x"} {
					for q := 0; q < n+2; q++ {
						if r.Intn(3) == 0 {
							list = append(list, wire.TopicPartition{Topic: topic, Partition: q})
						}
					}
				}
				hints := randomHints(r, x, list)
				at := 0
				for j, lt := range list {
					got, ok := p.getSlot(lt, p.slotOf(lt, topo.SlotAt(hints, j)), &at)
					if want, wok := ref[lt]; got != want || ok != wok {
						t.Fatalf("seed %d, op %d: getSlot(%v) = %d %v, want %d %v", seed, i, lt, got, ok, want, wok)
					}
				}
				at = 0
				for j, lt := range list {
					v := r.Intn(1000)
					p.setSlot(lt, p.slotOf(lt, topo.SlotAt(hints, j)), v, &at)
					ref[lt] = v
				}
			}
			got, ok := p.get(tp)
			hgot, hok := p.getHint(tp, hint)
			want, wok := ref[tp]
			if got != want || ok != wok || hgot != want || hok != wok || p.at(tp) != want || p.len() != len(ref) {
				t.Fatalf("seed %d, op %d: get(%v) = %d %v, getHint(%d) = %d %v (len %d), want %d %v (len %d)",
					seed, i, tp, got, ok, hint, hgot, hok, p.len(), want, wok, len(ref))
			}
			if i%50 == 0 {
				if a, b := p.String(), fmt.Sprint(ref); a != b {
					t.Fatalf("seed %d: spelled %s, the map %s", seed, a, b)
				}
			}
		}
		for j := range frozen {
			if a, b := frozen[j].String(), fmt.Sprint(frozenRef[j]); a != b {
				t.Fatalf("seed %d: clone %d changed: %s, want %s", seed, j, a, b)
			}
		}
	}
}

// BenchmarkPartIntsRevokeHalf: a member of 1,000 partitions gives every
// other one up, all at once (delAll, one pass) against one at a time (each
// removal moving the entries after it, as before delAll).
func BenchmarkPartIntsRevokeHalf(b *testing.B) {
	layout := topo.New(topo.Topology{Group: "g", Inputs: []topo.TopicSpec{{Name: "in", Partitions: 1000}}, Output: topo.TopicSpec{Name: "out", Partitions: 1}})
	var full partInts
	full.useIndex(layout.Input())
	var half []wire.TopicPartition
	for q := 0; q < 1000; q++ {
		full.set(wire.TopicPartition{Topic: "in", Partition: q}, q)
		if q%2 == 1 {
			half = append(half, wire.TopicPartition{Topic: "in", Partition: q})
		}
	}
	for _, c := range []struct {
		name string
		del  func(p *partInts)
	}{
		{"all-at-once", func(p *partInts) { p.delAll(half) }},
		{"one-at-a-time", func(p *partInts) {
			for _, tp := range half {
				if i, _, found, _ := p.lookup(tp, -1, false); found {
					p.es = slices.Delete(p.es, i, i+1)
				}
			}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var buf []partInt
				p := full.cloneIn(&buf)
				c.del(&p)
				if p.len() != 500 {
					b.Fatalf("%d left, want 500", p.len())
				}
			}
		})
	}
}

// randomHints is a slot list for tps as a commit might carry it: nil, or
// each entry the partition's slot, another partition's, -1, or past the
// end. Whatever the hints, the answers must be the same.
func randomHints(r *rand.Rand, x *topo.InputIndex, tps []wire.TopicPartition) []int32 {
	if r.Intn(4) == 0 {
		return nil
	}
	hints := x.SlotsOf(nil, tps)
	for i := range hints {
		switch r.Intn(5) {
		case 0:
			hints[i] = -1
		case 1:
			hints[i] = int32(r.Intn(x.Len() + 1))
		case 2:
			hints[i] = int32(x.Len() + r.Intn(3))
		}
	}
	return hints
}
