package txncoord

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestTxnLogMatchesAList: a family of transaction logs and transition
// lists, cloned from each other at random moments, fed records as the
// coordinator writes them (a partition list shared while unchanged, new
// transactional ids and groups appearing), read back as the plain lists
// of records appended, and share a partition list between records.
func TestTxnLogMatchesAList(t *testing.T) {
	t.Cleanup(store.SetSeqChunkForTest(4))
	r := rand.New(rand.NewSource(4))
	type family struct {
		log    Log
		trans  Transitions
		recs   []LogRecord
		trs    []Transition
		logged []wire.TopicPartition
	}
	fam := []*family{{}}
	for step := 0; step < 3000; step++ {
		f := fam[r.Intn(len(fam))]
		if r.Intn(30) == 0 && len(fam) < 20 {
			fam = append(fam, &family{log: f.log.clone(), trans: f.trans.clone(), recs: slices.Clone(f.recs), trs: slices.Clone(f.trs), logged: f.logged})
			continue
		}
		if f.logged == nil || r.Intn(4) == 0 {
			var parts []wire.TopicPartition
			for i := 0; i < r.Intn(4); i++ {
				parts = append(parts, wire.TopicPartition{Topic: "out", Partition: i})
			}
			f.logged = append([]wire.TopicPartition{}, parts...)
		}
		rec := LogRecord{Tick: step, TransactionalID: fmt.Sprintf("tx-C%d", r.Intn(5)), PID: int64(1000 + r.Intn(9)), Epoch: r.Intn(4),
			State: states[r.Intn(len(states))], Partitions: f.logged[:len(f.logged):len(f.logged)], Group: []string{"", "billing", "g2"}[r.Intn(3)]}
		tr := Transition{Tick: step, TransactionalID: rec.TransactionalID, From: states[r.Intn(len(states))], To: rec.State}
		f.log.append(rec)
		f.trans.append(tr)
		f.recs, f.trs = append(f.recs, rec), append(f.trs, tr)
	}
	for j, f := range fam {
		if got := f.log.Slice(0, f.log.Len()); !reflect.DeepEqual(got, f.recs) && len(f.recs) > 0 {
			t.Fatalf("log %d: %+v\nwant %+v", j, got, f.recs)
		}
		for i, rec := range f.log.All() {
			if !reflect.DeepEqual(rec, f.recs[i]) || !reflect.DeepEqual(f.log.At(i), rec) {
				t.Fatalf("log %d record %d: %+v, want %+v", j, i, rec, f.recs[i])
			}
		}
		if got := f.trans.Slice(0, f.trans.Len()); !slices.Equal(got, f.trs) {
			t.Fatalf("transitions %d: %+v\nwant %+v", j, got, f.trs)
		}
		if len(f.recs) > 8 && f.log.lists.Len() >= len(f.recs) {
			t.Fatalf("log %d: %d partition lists for %d records: want them shared", j, f.log.lists.Len(), len(f.recs))
		}
	}
}
