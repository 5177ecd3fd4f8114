package sim

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/trace"
)

// counted renders what a world counts and does, without its trace's
// detail: everything fingerprint shows but the packets and events, and
// the counts a windowed world keeps exact (delivery at both isolation
// levels, processed, the trace's lengths).
func counted(w *World) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tick %d group %s gen %d leader %s protocol %s\n", w.Tick, w.Group.State(), w.Group.Describe().Generation, w.Group.Describe().Leader, w.Group.Describe().Assignor)
	for _, gm := range w.Group.Members() {
		fmt.Fprintf(&b, "member %s %s %v joined=%v owned %v target %v revoking %v epoch %d\n", gm.MemberID, gm.InstanceID,
			gm.Assignment, gm.Joined, gm.Owned, gm.Target, gm.Revoking, gm.MemberEpoch)
	}
	for _, tp := range append(append([]TopicPartition{}, w.layout.Inputs()...), w.layout.Outputs()...) {
		l := w.broker.Log(tp)
		fmt.Fprintf(&b, "log %s hw %d lso %d\n", tp, l.HW(), l.LSO())
	}
	fmt.Fprintf(&b, "offsets %d txn %d\n", w.Group.Offsets.Log.Len(), w.Txn.Log.Len())
	for _, m := range w.procs {
		recs, done := m.Batch()
		fmt.Fprintf(&b, "proc %s/%d %s %v %v %v %d\n", m.Client, m.Inc, m.Phase, m.Owned, m.Hooks().Positions(), recs, done)
	}
	fmt.Fprintf(&b, "meter %d %v series %d\n", w.Meter.Total, w.Meter.Entries, w.Meter.Series.Len())
	for r := range w.Sink.Runs() { // as runs: T1's sink counts millions of records
		fmt.Fprintf(&b, "sink %s [%d,%d) x%d\n", r.TP, r.From, r.To, r.Times)
	}
	fmt.Fprintf(&b, "processed %d packets %d events %d\n", w.Processed(), w.Packets.Len(), w.Events.Len())
	fmt.Fprintf(&b, "delivery %+v %+v\n", w.Delivery("read_uncommitted"), w.Delivery("read_committed"))
	fmt.Fprintf(&b, "unavail %d %v lso held %d\n", w.Unavail.Total, w.Unavail.ByCause, w.LSOHeldTicks)
	// Every error code the world saw, those of packets let go of too (as
	// metrics counts the fenced ones), in the order of their kinds.
	errs := map[string]int{}
	w.Packets.ErrorsFrom(0, func(t API, response bool, e ErrorCode) { errs[fmt.Sprintf("%s/%v/%s", t, response, e)]++ })
	fmt.Fprintf(&b, "errors %v\n", errs)
	return b.String()
}

// packetLine and eventLine render one packet and one event as the views
// read them (a packet's request aside: a windowed trace may have let go
// of it).
func packetLine(p *Packet) string {
	return fmt.Sprintf("p%d %d>%d %s/%d>%s/%d %s %v %s %q lost=%v", p.ID, p.Sent, p.Delivered, p.From, p.FromInc, p.To, p.ToInc, p.Type, p.Response, p.Error, p.Summary, p.Lost)
}

func eventLine(e trace.Event) string {
	return fmt.Sprintf("e%d %s %s %q stop=%v records %v", e.Tick, e.Kind, e.Member, e.Text, e.Stop, e.Records.All())
}

// sameKeptHistory fails unless every packet and event w still keeps reads
// exactly as ref's of the same index, and every tick from w.HistoryFrom()
// on is whole in w (the packet and event just before the first kept are
// from before it). refs counts the references w's kept texts followed, by
// kind, and (kind+" across") those to an earlier chunk of texts.
func sameKeptHistory(t *testing.T, ref, w *World, refs map[string]int) {
	t.Helper()
	var packets, events []string
	restore := trace.FollowReferencesForTest(func(kind string, from, to uint64) {
		refs[kind]++
		if to < from {
			refs[kind+" across"]++
		}
	})
	for _, p := range w.Packets.From(0) {
		packets = append(packets, packetLine(p))
	}
	for _, e := range w.Events.From(0) {
		events = append(events, eventLine(e))
	}
	restore()
	if w.Packets.Len() != ref.Packets.Len() || w.Events.Len() != ref.Events.Len() {
		t.Fatalf("tick %d: %d packets and %d events, want %d and %d", w.Tick, w.Packets.Len(), w.Events.Len(), ref.Packets.Len(), ref.Events.Len())
	}
	from := w.HistoryFrom()
	// (a ref that keeps a window too may have let go of the one before)
	if f := w.Packets.First(); f > ref.Packets.First() && ref.Packets.At(f-1).Sent >= from {
		t.Fatalf("tick %d: history from %d, but packet %d (let go of) was sent at %d", w.Tick, from, f-1, ref.Packets.At(f-1).Sent)
	}
	if f := w.Events.First(); f > ref.Events.First() && ref.Events.At(f-1).Tick >= from {
		t.Fatalf("tick %d: history from %d, but event %d (let go of) is of tick %d", w.Tick, from, f-1, ref.Events.At(f-1).Tick)
	}
	for k, got := range packets {
		i := w.Packets.First() + k
		if want := packetLine(ref.Packets.At(i)); got != want {
			t.Fatalf("tick %d (history from %d): packet %d reads\n  %s\nwant\n  %s", w.Tick, from, i, got, want)
		}
		if req := ref.Packets.At(i).Req; req != nil && req.ID >= w.Packets.First() && w.Packets.At(i).Req == nil {
			t.Fatalf("tick %d: packet %d lost its request %d, still kept", w.Tick, i, req.ID)
		} else if req != nil && req.ID < w.Packets.First() {
			refs["answer whose request was let go of"]++ // its peer and API read as the request's
		}
	}
	for k, got := range events {
		i := w.Events.First() + k
		if want := eventLine(ref.Events.At(i)); got != want {
			t.Fatalf("tick %d (history from %d): event %d reads\n  %s\nwant\n  %s", w.Tick, from, i, got, want)
		}
	}
	sameKeptOffsets(t, ref, w)
}

// historySpec is the random worlds the window's property tests step:
// topologies, settings, transactions, both protocols and migrations
// between them, static members.
func historySpec(length int) worldSpec {
	return worldSpec{
		topology:      randomTopology,
		records:       span{2, 8},
		transactional: seedsAt(2, 0),
		readCommitted: seedsAt(4, 0),
		commit:        cycle(1, CommitAfter, CommitBefore, CommitAuto),
		protocol:      cycle(1, ClassicGroup, ClassicGroup, ConsumerGroup),
		mixed:         seedsAt(5, 4),
		ticks:         length, clients: 5, static: fixed(true),
	}
}

// historySchedule is sched, sorted, with steady traffic on every input
// partition from tick 10 (steadyFrom10) on seeds 1, 4, 7, ... and a roll of
// every member at tick 60 on seeds 2, 5, 8, ...: the history window's
// random worlds (TestPropertyHistoryWindow, and Delivery's reads on over
// them).
func historySchedule(sched []action, seed int) []action {
	sched = slices.Clone(sched)
	if seed%3 == 1 {
		sched = append([]action{steadyFrom10(seed)}, sched...)
	}
	if seed%3 == 2 {
		sched = append([]action{{tick: 60, name: "roll", do: func(w *World) error {
			var ms []string
			for _, m := range w.Group.Members() {
				ms = append(ms, strings.SplitN(m.MemberID, "-", 2)[0])
			}
			return w.Roll(RollSpec{Members: ms, Every: 4, Graceful: seed%2 == 0})
		}}}, sched...)
	}
	sortActions(sched)
	return sched
}

// steadyFrom10 starts steady traffic on every input partition at tick 10,
// 200+seed records a second.
func steadyFrom10(seed int) action {
	return action{tick: 10, name: "steady", do: func(w *World) error {
		rate, err := RatePerSecond(int64(200+seed), 1000)
		if err != nil {
			return err
		}
		return w.ProduceRate(w.Layout().Inputs(), rate)
	}}
}

// TestPropertyHistoryWindow: random worlds (topologies, settings,
// transactions, both protocols and migrations between them, joins,
// crashes, restarts, slow records, lost answers, rolls, steady traffic)
// stepped twice, keeping everything and keeping a small window: every
// tick the two count and do exactly the same, and every packet and event
// the windowed one keeps reads byte for byte as the other's; and the
// windowed one did let go of its past.
func TestPropertyHistoryWindow(t *testing.T) {
	setSeqChunk(t, 2)
	t.Cleanup(trace.SetArenaChunkForTest(64))
	seeds := 16
	if testing.Short() {
		seeds = 6
	}
	refs := map[string]int{}
	for seed := 0; seed < seeds; seed++ {
		const length = 300
		sc := seedWorld(t, seed, historySpec(length))
		window := 5 + sc.r.Intn(20)
		cfg := sc.cfg
		cfg.HistoryTicks = window
		w, err := New(sc.topo, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ref := sc.w
		sched := historySchedule(sc.sched, seed)
		a, b := &stepper{w: ref, sched: sched}, &stepper{w: w, sched: sched}
		t.Run(fmt.Sprintf("seed%d-window%d", seed, window), func(t *testing.T) {
			for ref.Tick < length {
				a.tick()
				b.tick()
				if got, want := counted(w), counted(ref); got != want {
					t.Fatalf("tick %d: the windowed world differs:\n%s", w.Tick, firstDiff(got, want))
				}
				if w.Tick%25 == 0 || w.Tick == length {
					sameKeptHistory(t, ref, w, refs)
				}
			}
			if w.HistoryFrom() == 0 || w.Packets.First() == 0 || w.Events.First() == 0 {
				t.Fatalf("after %d ticks with a window of %d: history from %d, first packet %d, first event %d: nothing let go of", length, window, w.HistoryFrom(), w.Packets.First(), w.Events.First())
			}
			if w.HistoryFrom() > w.Tick-window+1 {
				t.Fatalf("history from %d at tick %d: the window of %d ticks is not all kept", w.HistoryFrom(), w.Tick, window)
			}
		})
	}
	// The texts kept read through every kind of reference, within a chunk
	// and across chunks, after their past was let go of.
	t.Logf("references followed in kept texts: %v", refs)
	for _, k := range []string{"back", "tSame", "tSame across", "tListOf", "tListOf across", "answer whose request was let go of"} {
		if refs[k] == 0 {
			t.Errorf("no kept text followed a %s reference: the test no longer covers it", k)
		}
	}
}

// TestHistoryCloneKeepsItsHistory: a clone made before its original lets
// go of its past keeps every packet and event it had, reading as before,
// while the original forgets; and a clone steps on as its original does.
func TestHistoryCloneKeepsItsHistory(t *testing.T) {
	setSeqChunk(t, 2)
	t.Cleanup(trace.SetArenaChunkForTest(64))
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 400
	cfg.HistoryTicks = 10
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Join("C2", false, nil)
	for w.Tick < 20 {
		w.Step()
	}
	c := w.Clone()
	var packets, events []string
	for _, p := range c.Packets.From(0) {
		packets = append(packets, packetLine(p))
	}
	for _, e := range c.Events.From(0) {
		events = append(events, eventLine(e))
	}
	first := c.Packets.First()
	for w.Tick < 200 {
		w.Step()
	}
	if w.Packets.First() <= first {
		t.Fatalf("the original let go of nothing more: first packet %d, %d at the clone", w.Packets.First(), first)
	}
	var packets2, events2 []string
	for _, p := range c.Packets.From(0) {
		packets2 = append(packets2, packetLine(p))
	}
	for _, e := range c.Events.From(0) {
		events2 = append(events2, eventLine(e))
	}
	if strings.Join(packets, "\n") != strings.Join(packets2, "\n") || strings.Join(events, "\n") != strings.Join(events2, "\n") {
		t.Fatal("the clone's history changed when the original let go of its own")
	}
	for c.Tick < 200 {
		c.Step()
	}
	if got, want := counted(c), counted(w); got != want {
		t.Fatalf("the clone stepped differently:\n%s", firstDiff(got, want))
	}
}

// TestHistoryAtForgottenPanics: a packet and an event let go of cannot be
// read; their indexes stay (Len counts them), From starts at the first
// kept.
func TestHistoryAtForgottenPanics(t *testing.T) {
	setSeqChunk(t, 2)
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 400
	cfg.HistoryTicks = 5
	w, _ := New(DefaultTopology(), cfg)
	w.Join("C2", false, nil)
	for w.Tick < 200 {
		w.Step()
	}
	if w.Packets.First() == 0 {
		t.Fatal("nothing let go of")
	}
	for i := range w.Packets.From(0) {
		if i != w.Packets.First() {
			t.Fatalf("From(0) starts at %d, the first kept is %d", i, w.Packets.First())
		}
		break
	}
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "was let go of") {
			t.Fatalf("At of a packet let go of: %q", msg)
		}
	}()
	w.Packets.At(0)
}

// TestHistoryMemoryBounded: T1's world (100 members, 1,000 partitions at
// 1,000 records/s each, real time) for 20 simulated seconds with a 2 s
// window keeps at most a small multiple of what 2 s of its trace takes
// (packets, events and texts; the output logs are let go of by the
// broker, not here), and the heap, measured after a collection, is
// smaller than the same world's keeping everything by about what its trace
// let go of: the chunks are freed, not only unlinked.
func TestHistoryMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("steps T1's world for 20 simulated seconds, twice")
	}
	run := func(window int) (heap uint64, traceBytes int, w *World) {
		cfg := KafkaDefaultConfig()
		cfg.HistoryTicks = window
		w = hourWorld(t, cfg)
		for w.Tick < 20_000/cfg.TickMS {
			w.Step()
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		p, e, x := w.trace.Bytes()
		return ms.HeapAlloc, p + e + x, w
	}
	heapAll, traceAll, all := run(0)
	from := all.Tick - 2000/all.Cfg.TickMS // 2 s before the end
	pAll, eAll := all.Packets.Len(), all.Events.Len()
	all = nil
	heapWin, traceWin, win := run(2000)
	if win.Packets.Len() != pAll || win.Events.Len() != eAll {
		t.Fatalf("the windowed world sent %d packets and had %d events, the other %d and %d", win.Packets.Len(), win.Events.Len(), pAll, eAll)
	}
	if win.HistoryFrom() < from-100 || win.HistoryFrom() > from+1 {
		t.Fatalf("history from tick %d at %d: a 2 s window keeps from about %d", win.HistoryFrom(), win.Tick, from)
	}
	twoSeconds := traceAll / 10
	t.Logf("trace: %d MB in 20 s keeping everything, %d MB with a 2 s window (2 s of it: about %d MB); heap %d MB and %d MB",
		traceAll>>20, traceWin>>20, twoSeconds>>20, heapAll>>20, heapWin>>20)
	if traceWin > 2*twoSeconds {
		t.Errorf("with a 2 s window the trace holds %d bytes, more than twice what 2 s of it takes (%d)", traceWin, twoSeconds)
	}
	if freed, let := int64(heapAll)-int64(heapWin), traceAll-traceWin; freed < int64(let)*8/10 {
		t.Errorf("the trace let go of %d bytes but the heap is only %d bytes smaller: chunks let go of are still held", let, freed)
	}
	runtime.KeepAlive(win)
}

// TestHistoryT1KeptTexts: T1's world (real time, linger.ms 5: batches of
// many runs, whose texts refer to the producer's last, tSrcRunsLike) for 4
// simulated seconds with a 1 s window and keeping everything: the two count
// the same, and every packet and event kept reads as the other's, through
// references of every kind, across chunks of texts too.
func TestHistoryT1KeptTexts(t *testing.T) {
	if testing.Short() {
		t.Skip("steps T1's world for 4 simulated seconds, twice")
	}
	cfg := KafkaDefaultConfig()
	ref := hourWorld(t, cfg)
	cfg.HistoryTicks = 1000
	w := hourWorld(t, cfg)
	for w.Tick < 4000/cfg.TickMS {
		ref.Step()
		w.Step()
	}
	if got, want := counted(w), counted(ref); got != want {
		t.Fatalf("the windowed world differs:\n%s", firstDiff(got, want))
	}
	refs := map[string]int{}
	sameKeptHistory(t, ref, w, refs)
	t.Logf("history from tick %d at %d; references followed in kept texts: %v", w.HistoryFrom(), w.Tick, refs)
	if w.Packets.First() == 0 {
		t.Fatal("nothing let go of")
	}
	for _, k := range []string{"tSame across", "tSrcRunsLike", "tSrcRunsLike across", "tListOf across"} {
		if refs[k] == 0 {
			t.Errorf("no kept text followed a %s reference", k)
		}
	}
}

// TestHistoryPastFourGB: a windowed world writes more text in its life
// than the 4 GB a reference reached when it was 32 bits (the arena's
// address space: its chunks made 64 bytes long here, so 16 MB of text
// fill it), and keeps working: the same world keeping everything stops
// with the arena full; with a window of 100 ticks or of 300 it goes on
// well past that tick, the two counting the same, and every packet and
// event the first keeps reading as the second's.
func TestHistoryPastFourGB(t *testing.T) {
	if testing.Short() {
		t.Skip("steps T1's world three times past 4 GB of text address space")
	}
	t.Cleanup(trace.SetArenaChunkForTest(64))
	cfg := KafkaDefaultConfig()
	small := func() *World { return hourWorld(t, cfg) }
	full := small()
	runFull := func() (tick int, msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		for full.Tick < 100_000 {
			full.Step()
		}
		return full.Tick, ""
	}
	stopped, msg := runFull()
	if !strings.Contains(msg, "arena is full") {
		t.Fatalf("the world keeping everything ran to tick %d: %q", stopped, msg)
	}
	stopped = full.Tick
	full = nil
	cfg.HistoryTicks = 100 * cfg.TickMS
	w := small()
	cfg.HistoryTicks = 300 * cfg.TickMS
	wide := small()
	for w.Tick < stopped*3/2 {
		w.Step()
		wide.Step()
		if w.Tick%100 == 0 {
			if got, want := counted(w), counted(wide); got != want {
				t.Fatalf("tick %d: the two windows differ:\n%s", w.Tick, firstDiff(got, want))
			}
		}
	}
	if used, reach := w.trace.TextReach(); used >= reach/4 {
		t.Fatalf("at tick %d the window's texts reach %d bytes of %d", w.Tick, used, reach)
	}
	sameKeptHistory(t, wide, w, map[string]int{})
	t.Logf("keeping everything the arena was full at tick %d; the windows went on to %d", stopped, w.Tick)
}

// TestHistoryReuserCopies: the explorer's copies (a Reuser's, each made in
// the storage of the one before, finished) of a windowed world step as
// plain copies do, keep their history apart from the world's and from one
// another's, and let go of their own past as they go.
func TestHistoryReuserCopies(t *testing.T) {
	setSeqChunk(t, 2)
	t.Cleanup(trace.SetArenaChunkForTest(64))
	cfg := DefaultConfig()
	cfg.RecordsPerPartition = 400
	cfg.HistoryTicks = 6
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Join("C2", false, nil)
	var r Reuser
	for w.Tick < 120 {
		w.Step()
		if w.Tick%10 != 0 {
			continue
		}
		plain, reused := w.Clone(), r.Clone(w)
		for k := 0; k < 40; k++ {
			plain.Step()
			reused.Step()
		}
		if got, want := counted(reused), counted(plain); got != want {
			t.Fatalf("tick %d: a Reuser's copy stepped differently:\n%s", w.Tick, firstDiff(got, want))
		}
		sameKeptHistory(t, plain, reused, map[string]int{})
		if reused.Packets.First() <= w.Packets.First() {
			t.Fatalf("tick %d: the copy let go of nothing of its own (first packet %d, the world's %d)", w.Tick, reused.Packets.First(), w.Packets.First())
		}
	}
}

// TestPropertyHistoryWindowSwitched: history.ms set while a world runs.
// Random worlds (as TestPropertyHistoryWindow's), one keeping everything
// and one whose window starts at everything or a few ticks and narrows
// two or three times at random ticks (World.Set, as the kernel's set):
// every tick the two count and do exactly the same, the second's views
// start at its window (DetailFrom, never before what it holds), every
// packet and event it keeps reads byte for byte as the first's, a wider
// window is refused past tick 0 and changes nothing, and once the window
// has passed the first switch the texts written before it are let go of.
func TestPropertyHistoryWindowSwitched(t *testing.T) {
	setSeqChunk(t, 2)
	t.Cleanup(trace.SetArenaChunkForTest(64))
	seeds := 16
	if testing.Short() {
		seeds = 6
	}
	refs := map[string]int{}
	for seed := 0; seed < seeds; seed++ {
		const length = 320
		sc := seedWorld(t, seed, historySpec(length))
		cfg := sc.cfg
		if seed%2 == 1 {
			cfg.HistoryTicks = 40 + sc.r.Intn(40) // windowed from the start
		}
		w, err := New(sc.topo, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ref := sc.w
		sched := sc.sched
		if seed%3 == 1 { // steady traffic on every input partition from tick 10
			sched = append([]action{steadyFrom10(seed)}, sched...)
		}
		sortActions(sched)
		// The switches, narrowing: at ticks 30..200, the first from
		// everything (or the start's window) to 8..40 ticks.
		type switchAt struct{ tick, window int }
		var switches []switchAt
		win := w.HistoryWindow()
		for tick := 30 + sc.r.Intn(40); tick < 200 && len(switches) < 3; tick += 20 + sc.r.Intn(60) {
			next := 8 + sc.r.Intn(33)
			switch {
			case win >= 40:
				next = 3 + sc.r.Intn(4) // far narrower: its texts reach far less far back
			case win > 0:
				next = max(3, win-sc.r.Intn(win))
			}
			switches = append(switches, switchAt{tick, next})
			win = next
		}
		a, b := &stepper{w: ref, sched: sched}, &stepper{w: w, sched: sched}
		t.Run(fmt.Sprintf("seed%d-from%d-%v", seed, w.HistoryWindow(), switches), func(t *testing.T) {
			firstSwitch := -1
			for ref.Tick < length {
				for _, s := range switches {
					if s.tick != w.Tick {
						continue
					}
					if h := w.HistoryWindow(); h > 0 {
						before := counted(w)
						if err := w.Set("", "history.ms", strconv.Itoa(h+5)); err == nil {
							t.Fatalf("tick %d: history.ms %d widened a window of %d", w.Tick, h+5, h)
						} else if !strings.Contains(err.Error(), "can only narrow") {
							t.Fatalf("tick %d: history.ms %d: %v", w.Tick, h+5, err)
						}
						if counted(w) != before || w.HistoryWindow() != h || w.Cfg.HistoryWindow() != h {
							t.Fatalf("tick %d: a refused history.ms changed the world", w.Tick)
						}
					}
					if err := w.Set("", "history.ms", strconv.Itoa(s.window)); err != nil {
						t.Fatalf("tick %d: history.ms %d: %v", w.Tick, s.window, err)
					}
					if w.HistoryWindow() != s.window {
						t.Fatalf("tick %d: history.ms %d gave a window of %d", w.Tick, s.window, w.HistoryWindow())
					}
					if firstSwitch < 0 {
						firstSwitch = w.Tick
					}
				}
				a.tick()
				b.tick()
				if got, want := counted(w), counted(ref); got != want {
					t.Fatalf("tick %d: the switched world differs:\n%s", w.Tick, firstDiff(got, want))
				}
				if h := w.HistoryWindow(); h > 0 && w.DetailFrom() != max(0, w.Tick-h) || w.HistoryFrom() > w.DetailFrom() {
					t.Fatalf("tick %d: window %d, views from %d, history kept from %d", w.Tick, h, w.DetailFrom(), w.HistoryFrom())
				}
				sameKeptHistory(t, ref, w, refs) // every tick: a text kept just past a switch may read one before it
			}
			h := w.HistoryWindow()
			if w.HistoryFrom() == 0 || w.Packets.First() == 0 {
				t.Fatalf("after %d ticks with a window of %d: history from %d, first packet %d: nothing let go of", length, h, w.HistoryFrom(), w.Packets.First())
			}
			if cfg.HistoryTicks == 0 && w.Tick > firstSwitch+3*h+60 && w.trace.TextsFrom() <= firstSwitch {
				t.Fatalf("at tick %d, window %d: the texts from before the switch at %d are still kept (from tick %d)", w.Tick, h, firstSwitch, w.trace.TextsFrom())
			}
		})
	}
	t.Logf("references followed in kept texts: %v", refs)
	for _, k := range []string{"back", "tSame", "tSame across", "tListOf"} {
		if refs[k] == 0 {
			t.Errorf("no kept text followed a %s reference: the test no longer covers it", k)
		}
	}
}

// TestSteadyWorkKeptAfterANarrowing: a world that kept everything and
// takes a window as it runs still holds what it wrote before until the
// window has passed the switch, and the estimate's kept work says so
// (keptSpan); once that is let go of, it counts the window's alone.
func TestSteadyWorkKeptAfterANarrowing(t *testing.T) {
	setSeqChunk(t, 2)
	t.Cleanup(trace.SetArenaChunkForTest(64))
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	rate, err := RatePerSecond(500, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.ProduceRate(w.Layout().Inputs(), rate); err != nil {
		t.Fatal(err)
	}
	for w.Tick < 200 {
		w.Step()
	}
	all := w.SteadyWorkKept(0)
	if err := w.Set("", "history.ms", "20"); err != nil {
		t.Fatal(err)
	}
	if got := w.SteadyWorkKept(0); got != all {
		t.Fatalf("just after the switch the world holds all it wrote (%+v), the estimate counts %+v", all, got)
	}
	for w.Tick < 400 {
		w.Step()
		if _, held := w.trace.HeldBeforeSwitch(); !held {
			break
		}
		if got := w.SteadyWorkKept(0); got.Records < w.SteadyWorkWindow(0, w.Tick-200).Records {
			t.Fatalf("tick %d: holding detail from before the switch at 200, the estimate counts %+v", w.Tick, got)
		}
	}
	if _, held := w.trace.HeldBeforeSwitch(); held {
		t.Fatalf("at tick %d the world still holds detail from before its window of 20 narrowed at tick 200", w.Tick)
	}
	if w.Tick < 220 {
		t.Fatalf("at tick %d the world let go of the detail from before the switch at 200, within its window of 20", w.Tick)
	}
	t.Logf("the detail from before the switch at tick 200 went at tick %d", w.Tick)
	if got, want := w.SteadyWorkKept(0), w.SteadyWorkWindow(0, 20); got != want {
		t.Fatalf("tick %d: the detail from before the switch let go of, the estimate counts %+v, not the window's %+v", w.Tick, got, want)
	}
}
