package explore

import (
	"sync/atomic"

	"github.com/kgrepl/kgrepl/sim"
)

// RunRereading is Run with the audit reader the explorer had before issue
// 13: each branch re-reads the whole output topic after every tick
// (sim.World.ReadTopic) and compares the read with the one before. It also
// returns how many open or aborted records those reads returned at
// read_committed (the aborted-read class), over every branch and tick.
func RunRereading(base *sim.World, opts Options) (*Report, int64, error) {
	defer raiseGC()()
	p, err := newPlan(base, opts)
	if err != nil {
		return nil, 0, err
	}
	var aborted atomic.Int64
	p.newReader = func(w *sim.World, iso string) lossReader {
		r := &rereader{iso: iso, aborted: &aborted}
		r.prev = r.read(w)
		return r
	}
	outcomes, err := p.run(ShardIndexes(1, 1, len(p.jobs)))
	if err != nil {
		return nil, 0, err
	}
	return newReport(p.sweep(), outcomes), aborted.Load(), nil
}

type rereader struct {
	iso     string
	prev    map[sim.TopicPartition]map[int]bool
	aborted *atomic.Int64
}

func (r *rereader) read(w *sim.World) map[sim.TopicPartition]map[int]bool {
	got := map[sim.TopicPartition]map[int]bool{}
	for _, rec := range w.ReadTopic(w.Topo.Output.Name, r.iso) {
		if got[rec.Partition] == nil {
			got[rec.Partition] = map[int]bool{}
		}
		got[rec.Partition][rec.Offset] = true
		if r.iso == "read_committed" && (rec.Aborted || rec.Open) {
			r.aborted.Add(1)
		}
	}
	return got
}

func (r *rereader) lostSince(w *sim.World) bool {
	now := r.read(w)
	lost := false
	for tp, offs := range r.prev {
		for off := range offs {
			lost = lost || !now[tp][off]
		}
	}
	r.prev = now
	return lost
}

// BranchAlone runs branch i of the sweep Run(base, opts) would run from a
// copy of base stepped to the branch's tick on its own, sharing nothing
// with the other branches.
func BranchAlone(base *sim.World, opts Options, i int) (Outcome, error) {
	p, err := newPlan(base, opts)
	if err != nil {
		return Outcome{}, err
	}
	jb := p.jobs[i]
	w := base.Clone()
	for w.Tick < jb.tick {
		w.Step()
	}
	return p.runBranch(w, jb), nil
}
