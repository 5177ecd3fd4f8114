// Package chart builds kgrepl's charts over time (the pause meter,
// duplicates and lost records, lag, and who owns which partition) as
// gonum/plot values. Building reads a recorded Run; rendering to SVG or PNG
// bytes is separate, and nothing here writes a file.
package chart

import (
	"math"
	"slices"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// Need says what a Recorder samples at each tick; sampling only what a
// chart reads keeps long runs cheap.
type Need uint8

const (
	NeedPause Need = 1 << iota
	NeedDelivery
	NeedLag
	NeedOwners
	NeedUnavailable
	NeedAll = NeedPause | NeedDelivery | NeedLag | NeedOwners | NeedUnavailable
)

// Frame is what the charts read from the world at one tick.
type Frame struct {
	Tick       int
	Generation int
	State      sim.GroupState
	Pause      int // the pause meter's total so far
	// Delivery counters, by isolation level.
	Duplicates map[string]int
	Lost       map[string]int
	HeldBack   int   // read_committed: committed invoices past the LSO
	Lag        []int // per input partition
	// LagTotal is the lag summed over the partitions a Recorder told to
	// total (Recorder.LagTotal), when the frames hold fewer than that.
	LagTotal int
	Owners   []Ownership
	// Unavailable is the unavailability's partition-ticks so far by cause
	// (sim.Unavailability.ByCause), UnavailableNow the partitions of each
	// cause in this tick.
	Unavailable, UnavailableNow sim.CauseCounts
}

// Ownership is who works on one input partition at one tick.
type Ownership struct {
	Owner string // the client consuming it ("" = nobody)
	// Cause is why nobody could consume it in this tick (sim.Available:
	// somebody did, or nobody subscribes to it), as the unavailability
	// counted it: the timeline greys what the unavailability counts.
	Cause  sim.Cause
	Zombie string // a client processing one of its records without a place in the group
}

// Mark is a point in time worth a line on a chart: a crash, a poll timeout.
type Mark struct {
	Tick   int
	Client string
	Text   string
}

// Run is one branch's history as the charts read it.
type Run struct {
	Name     string // the branch
	Assignor string
	// Protocol is the group's type at the end of the run: classic, or
	// consumer (KIP-848), whose rebalances are numbered by group epoch.
	Protocol      sim.GroupType
	Isolation     string
	Transactional bool
	Partitions    []string // short names (o0, p2), in the world's order
	// InTotal is how many partitions each frame's LagTotal sums, when the
	// run was recorded as a total and the partitions to draw beside it
	// (Recorder.LagTotal); 0 when the frames hold every partition's lag.
	InTotal int
	// OfPartitions is how many input partitions the world has when the
	// run was recorded for the first MaxTimelineRows of them alone (the
	// rows a timeline draws); 0 when Partitions are the chart's.
	OfPartitions int
	Clients      []string
	Frames       []Frame
	Rebalances   []sim.PauseEntry
	Marks        []Mark
	FinalPause   int
}

// Isolations are the levels the delivery counters are kept for.
var Isolations = []string{"read_committed", "read_uncommitted"}

// Recorder samples a world tick by tick (pass Visit to Session.Replay).
type Recorder struct {
	need Need
	run  Run
	last *sim.World
	// events is the index of the next event to look at for marks: they
	// are gathered as the world goes, since a world that keeps a window
	// of its past (history.ms) lets its older events go.
	events int
	marks  []Mark
	only   []int // OnlyPartitions' indexes; nil: every input partition
	// window: Window's ticks (to < 0: to the end); windowed false keeps
	// every frame.
	windowed bool
	from, to int
	// totalled, total: LagTotal's partitions (nil total: every input).
	totalled bool
	total    []int
}

// NewRecorder starts recording a branch.
func NewRecorder(branch string, need Need) *Recorder {
	return &Recorder{need: need, run: Run{Name: branch}}
}

// OnlyPartitions records the lag and owners of the input partitions at
// idx alone (indexes into the world's inputs, in that order), as
// Run.Only cuts a run to them, without keeping the others' in every
// frame: a lag chart of a few partitions of a big group keeps a few
// numbers a tick, not one for each of its partitions. Call it before the
// first Visit; the run's Partitions are then those, and its Clients
// those Only keeps.
func (r *Recorder) OnlyPartitions(idx []int) { r.only = slices.Clone(idx) }

// Window keeps the frames of the ticks from to to alone (to < 0: to the
// end of the branch), as Window cuts a run (to 0 too, as there), so a
// replay that starts before from (at a checkpoint) or a long branch's
// chart of a few ticks keeps only those frames. Marks are gathered from
// every tick seen.
func (r *Recorder) Window(from, to int) {
	if to <= 0 {
		to = -1
	}
	r.windowed, r.from, r.to = true, from, to
}

// LagTotal records in each frame the lag summed over the input partitions
// at idx (nil: every one), for a chart of many partitions recorded as
// their total and the few to draw beside it (OnlyPartitions): lagTotal
// draws that run as it draws one holding every partition's lag.
func (r *Recorder) LagTotal(idx []int) { r.totalled, r.total = true, slices.Clone(idx) }

// Visit samples the world as it is now.
func (r *Recorder) Visit(w *sim.World) {
	r.last = w
	r.gatherMarks(w)
	if r.windowed && !inWindow(w.Tick, r.from, r.to) {
		return
	}
	f := sample(w, r.need, r.only)
	if r.totalled {
		f.LagTotal = w.TotalLag(r.total)
	}
	if n := len(r.run.Frames); n > 0 && r.run.Frames[n-1].Tick == f.Tick {
		r.run.Frames[n-1] = f // commands between ticks change what the tick ends with
		return
	}
	r.run.Frames = append(r.run.Frames, f)
}

// Finish samples the branch's world as it is now (commands after the last
// tick change it too) and returns the run.
func (r *Recorder) Finish(now *sim.World) *Run {
	if now == nil {
		now = r.last
	}
	if now == nil {
		return &r.run
	}
	r.Visit(now)
	w := now
	r.run.Assignor = w.Group.Describe().Assignor
	if r.run.Assignor == "" {
		r.run.Assignor = w.Cfg.Client.Assignor
	}
	r.run.Protocol = w.Group.Type()
	r.run.Isolation = w.Cfg.Isolation
	r.run.Transactional = len(w.Txn.Entries()) > 0
	r.run.Partitions = nil
	for _, tp := range onlyOf(w.Layout().Inputs(), r.only) {
		r.run.Partitions = append(r.run.Partitions, w.Layout().ShortName(tp))
	}
	r.run.InTotal = 0
	if r.totalled {
		r.run.InTotal = len(onlyOf(w.Layout().Inputs(), r.total))
	}
	r.run.Clients = natural.Sorted(w.Clients()) // the legend's order
	if r.only != nil {
		r.run.keepClientsSeen() // as Only cuts them
	}
	r.run.Rebalances = nil
	for _, e := range w.Meter.Entries {
		e.Partitions = append([]sim.TopicPartition{}, e.Partitions...)
		r.run.Rebalances = append(r.run.Rebalances, e)
	}
	r.run.FinalPause = w.Meter.Total
	r.run.Marks = r.marks
	return &r.run
}

// gatherMarks adds the marks of the events since the last look.
func (r *Recorder) gatherMarks(w *sim.World) {
	if w.Events.Len() < r.events {
		r.events, r.marks = 0, nil // a world made anew: its marks are its own
	}
	for i, e := range w.Events.Headers(max(r.events, w.Events.First())) {
		switch e.Kind {
		case sim.EvCrash:
			r.marks = append(r.marks, Mark{Tick: e.Tick, Client: e.Member, Text: e.Member + " crashes"})
		case sim.EvPollTimeout:
			r.marks = append(r.marks, Mark{Tick: e.Tick, Client: e.Member, Text: e.Member + " poll timeout"})
		case sim.EvTxnState:
			// "tx-C2: Ongoing -> PrepareAbort (...)": the transaction is aborted from here on.
			if id, rest, ok := strings.Cut(w.Events.At(i).Text, ":"); ok && strings.Contains(rest, "-> PrepareAbort") {
				client := strings.TrimPrefix(id, "tx-")
				r.marks = append(r.marks, Mark{Tick: e.Tick, Client: client, Text: id + " aborts"})
			}
		}
	}
	r.events = w.Events.Len()
}

// inWindow says whether tick is in the window from..to (to < 0: no end).
func inWindow(tick, from, to int) bool { return tick >= from && (to < 0 || tick <= to) }

// onlyOf is tps at idx, in that order (all of tps for nil idx).
func onlyOf(tps []sim.TopicPartition, idx []int) []sim.TopicPartition {
	if idx == nil {
		return tps
	}
	out := make([]sim.TopicPartition, len(idx))
	for j, i := range idx {
		out[j] = tps[i]
	}
	return out
}

// sample reads the frame need asks for off w, the lag and owners of the
// input partitions at only (nil: all).
func sample(w *sim.World, need Need, only []int) Frame {
	// a consumer group's rebalances are its group epochs
	f := Frame{Tick: w.Tick, Generation: w.Group.Epoch(), State: w.Group.State(), Pause: w.Meter.Total,
		Unavailable: w.Unavail.ByCause, UnavailableNow: w.Unavail.NowCounts()}
	if need&NeedDelivery != 0 {
		f.Duplicates, f.Lost = map[string]int{}, map[string]int{}
		for _, iso := range Isolations {
			c := w.Delivery(iso)
			f.Duplicates[iso], f.Lost[iso] = c.Duplicates, c.Lost
			if iso == "read_committed" {
				f.HeldBack = c.HeldBack
			}
		}
	}
	if need&NeedLag != 0 {
		f.Lag = w.InputLags(nil, only)
	}
	if need&NeedOwners != 0 {
		index, rows := newRowIndex(w, only), len(w.Layout().Inputs())
		if only != nil {
			rows = len(only)
		}
		f.Owners = make([]Ownership, rows)
		now := w.Unavail.Now() // by input partition
		for j := range f.Owners {
			i := j
			if only != nil {
				i = only[j]
			}
			if i < len(now) {
				f.Owners[j].Cause = now[i]
			}
		}
		for _, c := range w.Clients() {
			m := w.Member(c)
			if m == nil || !m.Alive || draw.IsZombie(w, m) {
				continue
			}
			for _, tp := range m.Owned {
				if i, ok := index.row(tp); ok && f.Owners[i].Owner == "" {
					f.Owners[i].Owner = c
				}
			}
		}
		for _, m := range w.Processes() {
			if !draw.IsZombie(w, m) {
				continue
			}
			if _, tp, ok := draw.RecordInHand(w, m); ok {
				if i, ok := index.row(tp); ok {
					f.Owners[i].Zombie = m.Client
				}
			}
		}
	}
	return f
}

// rowIndex finds an input partition's row among a frame's: its number
// (topo.InputIndex), which is its row when the frame is of every input
// partition, else its place in only (the last, as a map from partition to
// row kept it). A timeline samples the owners of its rows at every tick,
// and each of a real group's 100,000 owned partitions was looked up by
// name in a map (a third of the chart's CPU).
type rowIndex struct {
	x      *topo.InputIndex
	c      topo.TopicCache
	lo, hi int         // the least and most number in only
	at     map[int]int // by number, its row in only; nil: every input partition's
}

func newRowIndex(w *sim.World, only []int) *rowIndex {
	r := &rowIndex{x: w.Layout().Input()}
	if only == nil {
		return r
	}
	r.at, r.lo, r.hi = make(map[int]int, len(only)), math.MaxInt, -1
	for j, i := range only {
		r.at[i] = j
		r.lo, r.hi = min(r.lo, i), max(r.hi, i)
	}
	return r
}

// row is tp's row, false when the frame has none for it.
func (r *rowIndex) row(tp sim.TopicPartition) (int, bool) {
	i, ok := r.x.Slot(tp, &r.c)
	switch {
	case !ok:
		return 0, false
	case r.at == nil:
		return i, true
	case i < r.lo || i > r.hi:
		return 0, false
	}
	j, ok := r.at[i]
	return j, ok
}

// Only is the run with the input partitions at idx (indexes into
// Partitions, in that order) and nothing of the others: each frame's lag
// and owners cut to them, and the clients to those that consumed one of
// them (or processed one as a zombie). The counts that are not per
// partition (pause, unavailability, deliveries) stay the whole world's.
func (r *Run) Only(idx []int) *Run {
	out := *r
	out.Partitions = make([]string, len(idx))
	for j, i := range idx {
		out.Partitions[j] = r.Partitions[i]
	}
	out.Frames = make([]Frame, len(r.Frames))
	for k, f := range r.Frames {
		g := f
		if f.Lag != nil {
			g.Lag = make([]int, len(idx))
			for j, i := range idx {
				if i < len(f.Lag) {
					g.Lag[j] = f.Lag[i]
				}
			}
		}
		if f.Owners != nil {
			g.Owners = make([]Ownership, len(idx))
			for j, i := range idx {
				if i < len(f.Owners) {
					g.Owners[j] = f.Owners[i]
				}
			}
		}
		out.Frames[k] = g
	}
	out.keepClientsSeen()
	return &out
}

// keepClientsSeen cuts Clients, when the frames hold owners, to those
// that consumed one of the frames' partitions or processed one of their
// records as a zombie.
func (r *Run) keepClientsSeen() {
	if r.Frames == nil || r.Frames[0].Owners == nil {
		return
	}
	seen := map[string]bool{}
	for _, f := range r.Frames {
		for _, o := range f.Owners {
			seen[o.Owner], seen[o.Zombie] = true, true
		}
	}
	var kept []string
	for _, c := range r.Clients {
		if seen[c] {
			kept = append(kept, c)
		}
	}
	r.Clients = kept
}
