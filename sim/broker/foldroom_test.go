package broker

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// TestFoldRoomsAreNoCopys: the general fold writes a level into the array
// of a level it replaced (foldScratch.rooms) only when no copy of the
// world was made since that array was (store.CopyEpoch): a copy's
// Forgotten reads the same runs however often the original folds after
// it, each fold still gives canonical's runs in a reused array (one of
// as many runtime pages as a new one), a level kept as it was (nothing
// new) is not written into, and without copies the arrays are reused.
func TestFoldRoomsAreNoCopys(t *testing.T) {
	shape := topo.Default()
	shape.Inputs = shape.Inputs[:1]
	shape.Inputs[0].Partitions = 3000 // levels of thousands of runs: arrays the runtime keeps in pages (room)
	shape.Output.Partitions = 4
	layout := topo.New(shape)
	tp := layout.Outputs()[1]
	slot := outputIndex(layout, tp)
	c := CellLog{tp: tp, names: layout}
	reused, copies := 0, 0
	for seed := int64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewSource(seed))
		sc := new(foldScratch)
		next := make([]int32, len(layout.Inputs()))
		var level ForgotLevel
		var made [][]ForgotRun // every array a fold wrote a level in
		type held struct {
			level ForgotLevel
			runs  []ForgotRun // its runs when the copy was made
		}
		var held1 []held
		for fold := 0; fold < 40; fold++ {
			// A run of every partition: nearly all join the last folded
			// (the level stays about as long, its arrays in as many
			// pages), a few leave a gap or come again (it grows).
			var add []ForgotRun
			for p := range next {
				first := next[p]
				switch x := r.Intn(100); {
				case x == 0 && first > 5:
					first -= 1 + int32(r.Intn(5))
				case x == 1:
					first += 1 + int32(r.Intn(8))
				}
				last := first + int32(r.Intn(4))
				next[p] = max(next[p], last+1)
				add = append(add, ForgotRun{Part: int32(p), First: first, Last: last, N: 1, Slotted: p%2 == 0 && r.Intn(50) > 0})
			}
			if fold%7 == 6 {
				add = nil // nothing let go of since: the level is kept as it is
			}
			want := c.foldByCanonical(level, add, slot)
			got := c.fold(level, add, nil, slot, sc)
			if !reflect.DeepEqual(got.Runs, want) && (len(got.Runs) > 0 || len(want) > 0) {
				t.Fatalf("seed %d fold %d: old %v, new %v: fold %v, canonical %v", seed, fold, level.Runs, add, got.Runs, want)
			}
			if len(add) > 0 {
				for _, m := range made {
					if sameArray(m, got.room) {
						reused++
						break
					}
				}
				made = append(made, got.room)
			}
			sc.letGoOf([2]ForgotLevel{level, level}, [2]ForgotLevel{got, got})
			level = got
			if r.Intn(6) == 0 {
				store.NoteCopy() // a World.clone: the copy holds level
				held1 = append(held1, held{level, slices.Clone(level.Runs)})
				copies++
			}
			for k, h := range held1 {
				if !slices.Equal(h.level.Runs, h.runs) {
					t.Fatalf("seed %d fold %d: copy %d's runs were written: %v, were %v", seed, fold, k, h.level.Runs, h.runs)
				}
			}
		}
	}
	t.Logf("%d folds into a reused array, %d copies", reused, copies)
	if reused == 0 || copies == 0 {
		t.Fatalf("%d folds into a reused array, %d copies: the test checks nothing", reused, copies)
	}
}
