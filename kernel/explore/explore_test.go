package explore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/explore"
	"github.com/kgrepl/kgrepl/sim"
)

// base makes the default world with C2 joined and the group stable, under
// the given setup lines, in a session (so scripts can be rebuilt from it).
func base(t testing.TB, setup ...string) *kernel.Session {
	t.Helper()
	s := kernel.NewSession()
	for _, l := range append(setup, "join C2", "run until stable") {
		if _, err := s.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	return s
}

func explore20(t testing.TB, w *sim.World, iso string, parallel int) *explore.Report {
	t.Helper()
	r, err := explore.Run(w, explore.Options{From: w.Tick, To: w.Tick + 20, Parallel: parallel, Isolation: iso})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Outcomes) != 21*2*len(explore.FaultKinds) {
		t.Fatalf("%d branches, want %d (21 ticks x 2 members x %d kinds)", len(r.Outcomes), 21*2*len(explore.FaultKinds), len(explore.FaultKinds))
	}
	return r
}

func TestCommitAfterDuplicatesNeverLoses(t *testing.T) {
	w := base(t, "set commit after").World()
	r := explore20(t, w, "read_uncommitted", 2)
	if r.Guarantee != explore.AtLeastOnce {
		t.Fatalf("guarantee %s", r.Guarantee)
	}
	if r.Counts[explore.Duplicate] == 0 {
		t.Error("commit after processing: no branch shows a duplicate")
	}
	if r.Counts[explore.LostWrite] != 0 || r.Violations != 0 {
		t.Errorf("commit after processing: %d branches lose a record", r.Counts[explore.LostWrite])
	}
}

func TestCommitBeforeLosesNeverDuplicates(t *testing.T) {
	w := base(t, "set commit before").World()
	r := explore20(t, w, "read_uncommitted", 2)
	if r.Counts[explore.LostWrite] == 0 {
		t.Error("commit before processing: no branch shows a lost record")
	}
	if r.Counts[explore.Duplicate] != 0 || r.Violations != 0 {
		t.Errorf("commit before processing: %d branches duplicate", r.Counts[explore.Duplicate])
	}
}

func TestTransactionsReadCommittedNeither(t *testing.T) {
	for _, assignor := range []string{"range", "cooperative-sticky"} {
		s := base(t, "set producer transactional", "set isolation.level read_committed", "set partition.assignment.strategy "+assignor)
		w := s.World()
		r, err := explore.Run(w, explore.Options{From: w.Tick, To: w.Tick + 30, Parallel: 2, Isolation: "read_committed"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Guarantee != explore.ExactlyOnce {
			t.Fatalf("guarantee %s", r.Guarantee)
		}
		for _, c := range []string{explore.LostWrite, explore.Duplicate, explore.AbortedRead, explore.NonMonotonicRead, explore.Stalled} {
			if r.Counts[c] != 0 {
				i := r.Shortest[c]
				t.Errorf("%s: transactions with read_committed: %d branches show %s, e.g. %s at tick %d: %s",
					assignor, r.Counts[c], c, r.Outcomes[i].Fault.Command(), r.Outcomes[i].Tick, r.Outcomes[i].Summary())
			}
		}
		// The same worlds with the offsets committed before the marker: the
		// explorer must catch it.
		bad := w.Clone()
		bad.Mutations.CommitOffsetsBeforeMarker = true
		rb, err := explore.Run(bad, explore.Options{From: w.Tick, To: w.Tick + 30, Parallel: 2, Isolation: "read_committed"})
		if err != nil {
			t.Fatal(err)
		}
		if rb.Counts[explore.LostWrite] == 0 || rb.Violations == 0 {
			t.Errorf("%s: with offsets committed before the COMMIT marker, the explorer found no lost write", assignor)
		}
	}
}

// TestParallelEqualsSequential: any number of workers gives the report a
// sequential run gives, and each branch's outcome is what the branch gives
// when run alone from a copy of the base world stepped to its tick (so the
// copies of the world at each tick, shared by the branches there, leak
// nothing from one branch to another).
func TestParallelEqualsSequential(t *testing.T) {
	for _, c := range []struct {
		iso   string
		setup []string
	}{
		{"read_uncommitted", []string{"set commit after", "set partition.assignment.strategy cooperative-sticky"}},
		{"read_committed", []string{"set producer transactional", "set isolation.level read_committed"}},
	} {
		w := base(t, c.setup...).World()
		// the base has read its output logs (metrics would have): every
		// copy of it shares those reads (sim's deliveryCache), the
		// workers' branches reading on from them at once
		w.Delivery("read_committed")
		w.Delivery("read_uncommitted")
		seq := explore20(t, w, c.iso, 1)
		for _, p := range []int{2, 3, 4} {
			if par := explore20(t, w, c.iso, p); !reflect.DeepEqual(seq, par) {
				t.Fatalf("%v: %d workers and a sequential explore gave different reports", c.setup, p)
			}
		}
		opts := explore.Options{From: w.Tick, To: w.Tick + 20, Isolation: c.iso}
		for i := 0; i < len(seq.Outcomes); i += 5 {
			alone, err := explore.BranchAlone(w, opts, i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(alone, seq.Outcomes[i]) {
				t.Fatalf("%v: branch %d (%s at tick %d) alone: %s; in the sweep: %s", c.setup, i, alone.Fault.Command(), alone.Tick, alone.Summary(), seq.Outcomes[i].Summary())
			}
		}
	}
}

// TestReaderMatchesRereads: the incremental audit reader finds what
// re-reading the whole output topic after every tick finds (the explorer's
// reader before issue 13), branch by branch, and those re-reads never
// return an open or aborted record at read_committed.
func TestReaderMatchesRereads(t *testing.T) {
	for _, c := range []struct {
		iso    string
		mutate bool
		setup  []string
	}{
		{"read_uncommitted", false, nil},
		{"read_uncommitted", false, []string{"set commit before"}},
		{"read_committed", false, []string{"set producer transactional", "set isolation.level read_committed", "set partition.assignment.strategy cooperative-sticky"}},
		{"read_committed", true, []string{"set producer transactional", "set isolation.level read_committed"}},
		{"read_uncommitted", false, []string{"set producer transactional"}},
	} {
		w := base(t, c.setup...).World()
		if c.mutate {
			w = w.Clone()
			w.Mutations.CommitOffsetsBeforeMarker = true
		}
		opts := explore.Options{From: w.Tick, To: w.Tick + 8, Isolation: c.iso, Parallel: 2}
		got, err := explore.Run(w, opts)
		if err != nil {
			t.Fatal(err)
		}
		want, aborted, err := explore.RunRereading(w, opts)
		if err != nil {
			t.Fatal(err)
		}
		if aborted != 0 {
			t.Errorf("%v: re-reads at %s returned %d open or aborted records", c.setup, c.iso, aborted)
		}
		for i := range want.Outcomes {
			if !reflect.DeepEqual(got.Outcomes[i], want.Outcomes[i]) {
				t.Errorf("%v: branch %d (%s at tick %d): incremental reader %s; re-reading %s", c.setup, i,
					want.Outcomes[i].Fault.Command(), want.Outcomes[i].Tick, got.Outcomes[i].Summary(), want.Outcomes[i].Summary())
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: the reports differ", c.setup)
		}
	}
}

func TestCounterexampleScriptsReproduce(t *testing.T) {
	for _, setup := range [][]string{{"set commit after"}, {"set commit before"}} {
		s := base(t, setup...)
		dir := t.TempDir()
		if _, err := s.Exec("explore --ticks " + fmt.Sprint(s.World().Tick) + ".." + fmt.Sprint(s.World().Tick+20) + " --save " + dir); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.kg"))
		if len(files) == 0 {
			t.Fatalf("%v: no counterexample saved", setup)
		}
		for _, f := range files {
			data, _ := os.ReadFile(f)
			text := string(data)
			// The script names its outcome on its "# explore:" line.
			var want string
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, "# explore: ") {
					want = l[strings.Index(l, "-> ")+3:]
				}
			}
			r := kernel.NewSession()
			for i, l := range strings.Split(text, "\n") {
				if _, err := r.Exec(l); err != nil {
					t.Fatalf("%s line %d: %v", f, i+1, err)
				}
			}
			w := r.World()
			d := w.Delivery("read_uncommitted")
			if strings.Contains(want, "duplicate ") && !strings.Contains(want, fmt.Sprintf("duplicate %d (%s)", d.Duplicates, strings.Join(d.DuplicateNames, " "))) {
				t.Errorf("%s: the script ends with duplicates %v; the explorer saw %q", filepath.Base(f), d.DuplicateNames, want)
			}
			if strings.Contains(want, "lost-write ") && !strings.Contains(want, fmt.Sprintf("lost-write %d (%s)", d.Lost, strings.Join(d.LostNames, " "))) {
				t.Errorf("%s: the script ends with lost %v; the explorer saw %q", filepath.Base(f), d.LostNames, want)
			}
			if !strings.Contains(want, "duplicate") && d.Duplicates > 0 || !strings.Contains(want, "lost-write") && d.Lost > 0 {
				t.Errorf("%s: the script shows duplicates %v lost %v that the explorer did not see (%q)", filepath.Base(f), d.DuplicateNames, d.LostNames, want)
			}
		}
	}
}

func TestBadOptions(t *testing.T) {
	w := base(t).World()
	if _, err := explore.Run(w, explore.Options{From: w.Tick - 1, To: w.Tick}); err == nil {
		t.Error("a window before the current tick was accepted")
	}
	if _, err := explore.Run(w, explore.Options{From: w.Tick, To: w.Tick, Faults: []string{"meteor"}}); err == nil || !strings.Contains(err.Error(), "meteor") {
		t.Errorf("an unknown fault kind: %v", err)
	}
}

// BenchmarkBranches: branches per second on the default world with two
// members (commit after), sequential and on every core. Besides the wall
// clock it reports the process's CPU time per branch (user + system, every
// thread, the garbage collector's too): on a shared machine the wall-clock
// ratio of 2 workers to 1 says as much about the neighbours as about the
// explorer; equal CPU time per branch on 1 and 2 workers means the work
// itself scales.
func BenchmarkBranches(b *testing.B) {
	w := base(b, "set commit after").World()
	benchBranches(b, w, w.Tick, w.Tick+20)
}

// BenchmarkBranchesREADME is the example of docs/explorer.md (once the
// README's): the default world (auto-commit), C2 joined, the group stable,
// at tick 16, explored over ticks 16..40 (25 ticks x 2 members x 8 fault
// kinds = 400 branches).
func BenchmarkBranchesREADME(b *testing.B) {
	s := base(b)
	if _, err := s.Exec("run until tick 16"); err != nil {
		b.Fatal(err)
	}
	benchBranches(b, s.World(), 16, 40)
}

func benchBranches(b *testing.B, w *sim.World, from, to int) {
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("parallel%d", p), func(b *testing.B) {
			n := 0
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				r, err := explore.Run(w, explore.Options{From: from, To: to, Parallel: p})
				if err != nil {
					b.Fatal(err)
				}
				n += len(r.Outcomes)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "branches/s")
			b.ReportMetric((cpuTime()-cpu0).Seconds()*1e6/float64(n), "cpu-µs/branch")
		})
	}
	// scaling: the 2-worker speed-up measured in pairs. parallel1 and
	// parallel2 above run one after the other, seconds apart, so a
	// neighbour on the shared machine that comes or goes between them moves
	// their ratio; here each op is one sweep on 1 worker and one on 2, their
	// order alternating op by op, so both see the same machine. It reports
	// the median of the per-pair ratios (speedup-2v1) and the ratio of the
	// summed times (speedup-2v1-sum).
	b.Run("scaling", func(b *testing.B) {
		sweep := func(p int) time.Duration {
			t0 := time.Now()
			if _, err := explore.Run(w, explore.Options{From: from, To: to, Parallel: p}); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		}
		var ratios []float64
		var sum1, sum2 time.Duration
		for i := 0; i < b.N; i++ {
			var t1, t2 time.Duration
			if i%2 == 0 {
				t1, t2 = sweep(1), sweep(2)
			} else {
				t2, t1 = sweep(2), sweep(1)
			}
			sum1, sum2 = sum1+t1, sum2+t2
			ratios = append(ratios, float64(t1)/float64(t2))
		}
		sort.Float64s(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "speedup-2v1")
		b.ReportMetric(float64(sum1)/float64(sum2), "speedup-2v1-sum")
	})
}

// cpuTime is the CPU time the process has used, every thread together.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSweepGCPercentRestored: a sweep raises the collector's percentage
// while it runs (gc.go) and puts back the one in force before, also when
// two sweeps overlap.
func TestSweepGCPercentRestored(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: sweeps leave the collector alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	w := base(t, "set commit after").World()
	var most atomic.Int64
	watch := func() bool { // called before every tick: note the percentage in force
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		if v := int64(s[0].Value.Uint64()); v > most.Load() {
			most.Store(v)
		}
		return false
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := explore.Run(w, explore.Options{From: w.Tick, To: w.Tick + 2, Parallel: 2, Stop: watch}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if most.Load() <= 150 {
		t.Errorf("GOGC during the sweeps was at most %d, want it raised above 150", most.Load())
	}
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("after two sweeps GOGC is %d, want the 150 in force before", got)
	}
}

// TestStopMidSweep: a sweep asked to stop returns ErrStopped, whether the
// request comes while the branch list is made, while a worker makes the
// copy of the world a branch starts from, or while branches run, on one
// worker or several.
func TestStopMidSweep(t *testing.T) {
	w := base(t, "set commit after").World()
	opts := explore.Options{From: w.Tick, To: w.Tick + 10}
	var polls atomic.Int64
	opts.Stop = func() bool { polls.Add(1); return false }
	if _, err := explore.Run(w, opts); err != nil {
		t.Fatal(err)
	}
	total := polls.Load()
	for _, p := range []int{1, 2} {
		for _, after := range []int64{3, 12, 40, total / 2, total - 5} {
			var n atomic.Int64
			opts.Parallel = p
			opts.Stop = func() bool { return n.Add(1) > after }
			if r, err := explore.Run(w, opts); !errors.Is(err, explore.ErrStopped) || r != nil {
				t.Errorf("%d workers, stop after %d of %d polls: %v, %v; want ErrStopped", p, after, total, r, err)
			}
		}
	}
}
