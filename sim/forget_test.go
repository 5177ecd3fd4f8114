package sim

import (
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// forgetCase is one random world of the forgetting tests, as
// TestDeliveryRunsMatchPerRecord draws them: faults (crashes, restarts,
// lost answers, a rolling deploy), transactions on a third of the seeds
// (aborted batches after fencing and timeouts), linger.ms 0 to 4 by
// turns, steady traffic on two seeds of three, read_committed members on
// odd seeds; with its schedule.
func forgetCase(t *testing.T, proto GroupType, seed int) (*World, []action) {
	spec := propertyCase(proto)
	spec.transactional = seedsAt(3, 1)
	spec.readCommitted = seedsAt(2, 1)
	spec.idempotent = seedsAt(4, 2)
	spec.ticks, spec.clients = 250, 5
	spec.records = span{0, 60}
	spec.processing = drawn([2]int{1, 1}, [2]int{1, 7}, [2]int{3, 1}, [2]int{1, 40})
	spec.maxPoll = drawn(3, 10, 40, 500)
	sc := seedWorld(t, seed, spec)
	w := sc.w
	if err := w.Set("", "linger.ms", strconv.Itoa(seed%5)); err != nil {
		t.Fatal(err)
	}
	if seed%3 != 0 {
		if err := w.ProduceRate(w.layout.Inputs(), Rate{int64(1 + seed%4), int64(1 + seed%2)}); err != nil {
			t.Fatal(err)
		}
	}
	sched := append(slices.Clone(sc.sched), action{tick: sc.r.Intn(250), name: "roll", do: func(w *World) error {
		var ms []string
		for _, m := range w.procs {
			if m.Alive && !slices.Contains(ms, m.Client) {
				ms = append(ms, m.Client)
			}
		}
		return w.Roll(RollSpec{Members: ms, Every: 5, Graceful: seed%2 == 0})
	}})
	slices.SortStableFunc(sched, func(a, b action) int { return a.tick - b.tick })
	return w, sched
}

// outputCellsFrom renders the output logs' high watermarks, LSOs and
// cells from offset from[tp] on (Cells.From), for comparing a world that
// let go of its logs' past with one that did not.
func outputCellsFrom(w *World, from map[TopicPartition]int) string {
	var b []byte
	for _, tp := range w.layout.Outputs() {
		l := w.broker.Log(tp)
		b = fmt.Appendf(b, "%s hw %d lso %d\n", tp, l.HW(), l.LSO())
		for i, c := range l.Cells.From(from[tp]) {
			b = fmt.Appendf(b, "%d %+v rc=%v\n", i, c, l.ReadCommitted(i))
		}
	}
	return string(b)
}

// TestDeliveryAfterForgettingOutputs: a world whose output logs let go of
// their past every few ticks (ForgetOutputBefore, a window of 3 to 22
// ticks, chunks of 4 items so that small worlds drop many; on odd seeds
// as far as it may go each time, whatever it frees) counts exactly
// what the same world keeping everything counts, names and all, at both
// isolation levels, every tick: by runs (Delivery) and, every 5 ticks, a
// count a record (deliveryPerRecord, what a huge output topic uses); it
// steps the same (records processed, every output log's end, LSO and
// kept cells); and the worlds show records written again after their
// first invoice was let go of (a duplicate of a forgotten cell), aborted
// cells let go of, and losses.
func TestDeliveryAfterForgettingOutputs(t *testing.T) {
	setSeqChunk(t, 4)
	seeds := 16
	if testing.Short() {
		seeds = 6
	}
	found := map[string]int{}
	for _, proto := range protocols {
		for seed := 0; seed < seeds; seed++ {
			w, sched := forgetCase(t, proto, seed)
			f := w.Clone()
			window, every := 3+seed%20, 1+seed%4
			forgot := 0 // the last tick passed to ForgetOutputBefore
			i := 0
			for w.Tick < 350 {
				for i < len(sched) && sched[i].tick <= w.Tick {
					errW, errF := sched[i].do(w), sched[i].do(f)
					if fmt.Sprint(errW) != fmt.Sprint(errF) {
						t.Fatalf("%s seed %d tick %d %s: %v, after forgetting %v", proto, seed, w.Tick, sched[i].name, errW, errF)
					}
					i++
				}
				w.Step()
				f.Step()
				if f.Tick%every == 0 {
					forgot = f.Tick - window
					if seed%2 == 0 {
						f.broker.ForgetOutputBefore(forgot)
					} else { // as far as it may go each time: a fold a few ticks
						f.broker.ForgetAllOutputBefore(forgot)
					}
				}
				at := fmt.Sprintf("%s seed %d window %d tick %d", proto, seed, window, w.Tick)
				for _, iso := range []string{"read_uncommitted", "read_committed"} {
					want := w.Delivery(iso)
					if got := f.Delivery(iso); !reflect.DeepEqual(got, want) {
						t.Fatalf("%s %s: Delivery after forgetting %+v, keeping everything %+v", at, iso, got, want)
					}
					if w.Tick%5 == 0 {
						if got := deliveryPerRecord(f, iso); !reflect.DeepEqual(got, want) {
							t.Fatalf("%s %s: a count a record after forgetting %+v, keeping everything %+v", at, iso, got, want)
						}
					}
					if want.Lost > 0 {
						found["lost"]++
					}
				}
				if w.Processed() != f.Processed() {
					t.Fatalf("%s: %d records processed, %d after forgetting", at, w.Processed(), f.Processed())
				}
				starts := map[TopicPartition]int{}
				for _, tp := range w.layout.Outputs() {
					starts[tp] = f.broker.Log(tp).Start()
				}
				if w.Tick%10 == 0 {
					if got, want := outputCellsFrom(f, starts), outputCellsFrom(w, starts); got != want {
						t.Fatalf("%s: the cells kept differ from the same cells of the world keeping every one:\n%s\nwant\n%s", at, got, want)
					}
				}
				forgotDup := false
				for _, tp := range w.layout.Outputs() {
					l := f.broker.Log(tp)
					fo := l.Forgotten()
					if fo == nil {
						continue
					}
					found["logs let go of cells"]++
					if !reflect.DeepEqual(fo.Committed.Runs, fo.Uncommitted.Runs) {
						found["aborted cells let go of"]++
					}
					for _, r := range fo.Uncommitted.Runs {
						forgotDup = forgotDup || r.N > 1
					}
				}
				if d := w.Delivery("read_uncommitted"); d.Duplicates > 0 && forgotDup {
					found["duplicates of cells let go of"]++
				}
			}
			// The trace refers to an invoice by its place in its log from
			// the tick it was written: every event and packet of a tick
			// at or after the one the logs were let go of before spells
			// what it spells in the world keeping every cell.
			for k := w.Events.Len() - 1; k >= 0 && w.Events.At(k).Tick >= forgot; k-- {
				if got, want := fmt.Sprintf("%+v", f.Events.At(k)), fmt.Sprintf("%+v", w.Events.At(k)); got != want {
					t.Fatalf("%s seed %d: event %d after forgetting the logs before tick %d: %s, keeping every cell %s", proto, seed, k, forgot, got, want)
				}
				found["events spelled"]++
			}
			for k := w.Packets.Len() - 1; k >= 0 && w.Packets.At(k).Sent >= forgot; k-- {
				if got, want := f.Packets.At(k).Summary, w.Packets.At(k).Summary; got != want {
					t.Fatalf("%s seed %d: packet %d after forgetting the logs before tick %d: %s, keeping every cell %s", proto, seed, k, forgot, got, want)
				}
			}
		}
	}
	t.Logf("%v", found)
	for _, k := range []string{"lost", "logs let go of cells", "aborted cells let go of", "duplicates of cells let go of"} {
		if found[k] == 0 {
			t.Errorf("the worlds never showed %s (%v): the test proves less than it says", k, found)
		}
	}
}

// TestForgettingLeavesClonesTheirCells: a world's clone (a checkpoint, an
// explorer branch) keeps every cell and count the original let go of
// after the copy, and both go on stepping as before; the original reads
// from its new start, and refuses a cell below it with the reason.
func TestForgettingLeavesClonesTheirCells(t *testing.T) {
	setSeqChunk(t, 4)
	for seed := 1; seed < 4; seed++ {
		w, sched := forgetCase(t, ClassicGroup, seed)
		runSchedule(t, w, sched, 200)
		c := w.Clone()
		before, delivery := cellsText(c), c.Delivery("read_committed")
		w.broker.ForgetOutputBefore(w.Tick)
		moved := false
		for _, tp := range w.layout.Outputs() {
			moved = moved || w.broker.Log(tp).Start() > 0
		}
		if !moved {
			t.Fatalf("seed %d: no output log moved its start at tick %d", seed, w.Tick)
		}
		if got := cellsText(c); got != before {
			t.Fatalf("seed %d: the clone's cells changed when the original let go of its own", seed)
		}
		if got := c.Delivery("read_committed"); !reflect.DeepEqual(got, delivery) {
			t.Fatalf("seed %d: the clone's delivery changed: %+v, was %+v", seed, got, delivery)
		}
		if got := w.Delivery("read_committed"); !reflect.DeepEqual(got, delivery) {
			t.Fatalf("seed %d: the original's delivery changed: %+v, was %+v", seed, got, delivery)
		}
		for k := 0; k < 50; k++ {
			w.Step()
			c.Step()
		}
		for _, iso := range []string{"read_uncommitted", "read_committed"} {
			if got, want := w.Delivery(iso), c.Delivery(iso); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d %s: 50 ticks on, after forgetting %+v, the clone %+v", seed, iso, got, want)
			}
		}
		for _, tp := range w.layout.Outputs() {
			l := w.broker.Log(tp)
			if l.Start() == 0 {
				continue
			}
			func() {
				defer func() {
					if r := recover(); r == nil || !regexp.MustCompile(`cell \d+ of .* was let go of: the log starts at offset \d+`).MatchString(fmt.Sprint(r)) {
						t.Fatalf("seed %d: reading cell %d below %s's start %d: %v", seed, l.Start()-1, tp, l.Start(), r)
					}
				}()
				l.Cells.At(l.Start() - 1)
			}()
		}
	}
}

// TestForgettingBoundsOutputLogs: a steady world (100 input partitions
// fed 1,000 records a second each into 4 output partitions, Kafka's
// defaults) whose output logs let go of what is older than 2 seconds,
// every tick, keeps at most about as many bytes in them in its 20th
// simulated second as in its 10th (its window's, up to a quarter more
// (worthLettingGo), and a slice header a chunk let go of), where keeping
// everything doubles them; its folded runs stay one an input partition
// and output partition, not a batch.
func TestForgettingBoundsOutputLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("steps 4,000 ticks of a steady world")
	}
	cfg := KafkaDefaultConfig()
	cfg.RecordsPerPartition = 0
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ProcessingMSToTicks(1, 20, DefaultTickMS)
	w := steadyWorld(t, bigTopology(10, 10, 10), cfg, 1000)
	keep := w.Clone()
	window := 2000 / DefaultTickMS
	kept := func(w *World) int {
		n := 0
		for _, tp := range w.layout.Outputs() {
			n += w.broker.Log(tp).KeptBytes()
		}
		return n
	}
	second := 1000 / DefaultTickMS
	var at10, at20, keep10 int // the most kept in the 10th and 20th seconds
	for w.Tick < 20*second {
		w.Step()
		keep.Step()
		w.broker.ForgetOutputBefore(w.Tick - window)
		switch {
		case w.Tick > 9*second && w.Tick <= 10*second:
			at10 = max(at10, kept(w))
			keep10 = kept(keep)
		case w.Tick > 19*second:
			at20 = max(at20, kept(w))
		}
	}
	keep20 := kept(keep)
	t.Logf("output logs' bytes at most in the 10th and 20th seconds: %d and %d letting go of all but 2 s; %d and %d keeping all", at10, at20, keep10, keep20)
	if keep20 < keep10*3/2 {
		t.Fatalf("keeping everything, the output logs grew from %d to %d bytes only: the world is not steady", keep10, keep20)
	}
	if at20 > at10*11/10 || at20 > keep20/3 {
		t.Fatalf("letting go of all but 2 s, the output logs grew from %d to %d bytes at most (keeping all: %d)", at10, at20, keep20)
	}
	runs := 0
	for _, tp := range w.layout.Outputs() {
		if f := w.broker.Log(tp).Forgotten(); f != nil {
			runs += len(f.Uncommitted.Runs)
		}
	}
	if parts := len(w.layout.Inputs()) * len(w.layout.Outputs()); runs > parts {
		t.Fatalf("%d runs folded from the output logs' past, more than one for each of %d input and output partitions", runs, parts)
	}
	for _, iso := range []string{"read_uncommitted", "read_committed"} {
		if got, want := w.Delivery(iso), keep.Delivery(iso); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Delivery after forgetting %+v, keeping everything %+v", iso, got, want)
		}
	}
	runtime.KeepAlive(keep)
}

// TestWindowedRunsGoPastTheirPlaces: an output log's runs of invoice
// batches are at 32-bit places (4 GB: here a test's 4 KB, 64 chunks of
// 64 bytes). A steady world that lets go of its output logs' past
// writes many times that and runs on, its reach (RunsReach) what it
// keeps, every cell it keeps as the world keeping everything (at 32-bit
// places) has it and its delivery the same; the same world keeping
// everything stops at the reach (the engine panics; the kernel stops a
// step before).
func TestWindowedRunsGoPastTheirPlaces(t *testing.T) {
	cfg := KafkaDefaultConfig()
	cfg.RecordsPerPartition = 0
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ProcessingMSToTicks(1, 20, DefaultTickMS)
	const ticks, window = 1500, 40
	setSeqChunk(t, 4) // 64-byte chunks of runs
	shape := bigTopology(4, 2, 8)
	// A world's places are as wide as they were when it was made, for
	// its life: each world is made, stepped and read under one width.
	windowed := func() (starts map[TopicPartition]int, cells string, delivery []Counts) {
		defer store.SetPlaceBitsForTest(6 + 6)() // 64 chunks of places
		w := steadyWorld(t, shape, cfg, 1000)
		for w.Tick < ticks {
			w.Step()
			w.broker.ForgetOutputBefore(w.Tick - window)
			if reach := w.broker.RunsReach(); reach >= 4<<10 {
				t.Fatalf("tick %d: the runs reach %d bytes, keeping %d ticks", w.Tick, reach, window)
			}
		}
		starts = map[TopicPartition]int{}
		for _, tp := range w.layout.Outputs() {
			starts[tp] = w.broker.Log(tp).Start()
		}
		return starts, outputCellsFrom(w, starts), []Counts{w.Delivery("read_uncommitted"), w.Delivery("read_committed")}
	}
	starts, cells, delivery := windowed()
	keep := steadyWorld(t, shape, cfg, 1000)
	for keep.Tick < ticks {
		keep.Step()
	}
	// The world keeping everything reaches as far as its logs wrote.
	if wrote := keep.broker.RunsReach(); wrote < 3*4<<10 {
		t.Fatalf("the output logs wrote %d bytes of runs at most: not past their places' reach (4 KB) often enough to show them going round", wrote)
	}
	if want := outputCellsFrom(keep, starts); cells != want {
		t.Fatalf("the cells kept differ from the same cells of the world keeping every one:\n%s\nwant\n%s", cells, want)
	}
	if want := []Counts{keep.Delivery("read_uncommitted"), keep.Delivery("read_committed")}; !reflect.DeepEqual(delivery, want) {
		t.Fatalf("Delivery after the places went round %+v, keeping everything %+v", delivery, want)
	}
	defer store.SetPlaceBitsForTest(6 + 6)()
	all := steadyWorld(t, shape, cfg, 1000)
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "a Bytes is full") {
			t.Fatalf("a world keeping every run past its places' reach: %q, want the engine to stop", msg)
		}
	}()
	for all.Tick < ticks {
		all.Step()
	}
	t.Fatalf("a world keeping every run stepped %d ticks, %d bytes of runs, past its places' reach", ticks, all.broker.RunsReach())
}

// TestCheckerFindsATransactionalOffsetCommittedWithoutItsMarker: the
// Checker's offsets invariant, checked from where it left off (offsetsSeen)
// and still catching a committed transactional offset with no COMMIT
// marker after it, whether it comes first or after records it passed.
func TestCheckerFindsATransactionalOffsetCommittedWithoutItsMarker(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tp := w.Layout().Inputs()[0]
	log := &w.Group.Offsets.Log
	rec := func(pid int64, state string, marker bool) OffsetRecord {
		return OffsetRecord{Tick: w.Tick, Group: w.Group.ID(), TP: tp, PID: pid, State: state, Marker: marker}
	}
	c := NewChecker()
	log.Append(rec(-1, "committed", false))
	log.Append(rec(7, "committed", false))
	log.Append(rec(7, "COMMIT", true))
	if err := c.Check(w); err != nil {
		t.Fatalf("a committed offset with its marker after it: %v", err)
	}
	log.Append(rec(8, "committed", false))
	log.Append(rec(7, "COMMIT", true)) // another producer's marker
	err = c.Check(w)
	if err == nil || !strings.Contains(err.Error(), "pid 8 is committed without a COMMIT marker") {
		t.Fatalf("pid 8's offset without its marker, after records already checked: %v", err)
	}
	if err := NewChecker().Check(w); err == nil {
		t.Fatal("a new Checker passed pid 8's offset without its marker")
	}
	// A pending offset the Checker passed turns committed with no marker
	// (what a broken completeTxn would do): the next check still reads it.
	w2, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c2, log2 := NewChecker(), &w2.Group.Offsets.Log
	log2.Append(OffsetRecord{Group: w2.Group.ID(), TP: tp, PID: 9, State: "pending"})
	log2.Append(OffsetRecord{Group: w2.Group.ID(), TP: tp, PID: -1, State: "committed"})
	if err := c2.Check(w2); err != nil {
		t.Fatalf("a pending offset: %v", err)
	}
	log2.SetPendingStateForTest(9, "committed")
	if err := c2.Check(w2); err == nil || !strings.Contains(err.Error(), "pid 9 is committed without a COMMIT marker") {
		t.Fatalf("pid 9's pending offset turned committed without its marker: %v", err)
	}
}
