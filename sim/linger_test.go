package sim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestLingerBatchesPerTick: in a T1-shaped world (Kafka's defaults in real
// time, linger.ms 5; every input partition fed records each tick, a
// member processing many records of several partitions a tick, four
// output partitions), a member sends at most one Produce per output
// partition per tick (retries aside): its invoices of the tick, whatever
// input partition they are of, are one batch a partition. With linger.ms
// 0 the same world sends one per run of one input partition: more, the
// same records processed and written.
func TestLingerBatchesPerTick(t *testing.T) {
	run := func(linger string) (perTick map[string]int, produces, processed, written int) {
		cfg := KafkaDefaultConfig()
		if cfg.Client.Linger != 5 {
			t.Fatalf("KafkaDefaultConfig's linger.ms is %d, want Kafka 4.0's 5", cfg.Client.Linger)
		}
		cfg.RecordsPerPartition = 0
		cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ProcessingMSToTicks(1, 20, DefaultTickMS)
		w := steadyWorld(t, bigTopology(5, 2, 10), cfg, 1000)
		if err := w.Set("", "linger.ms", linger); err != nil {
			t.Fatal(err)
		}
		for w.Tick < 3000 {
			w.Step()
		}
		// Each Produce is written by the leader the tick after it was
		// sent, its produced event naming its member and partition (no
		// faults here: nothing is retried or refused).
		perTick = map[string]int{}
		writtenRe := regexp.MustCompile(` written to (\S+) at offsets? `)
		for _, p := range w.Packets.All() {
			if p.Type == Produce && !p.Response {
				produces++
			}
		}
		for _, e := range w.Events.All() {
			if m := writtenRe.FindStringSubmatch(e.Text); m != nil && e.Kind == EvProduced {
				perTick[fmt.Sprintf("t%d %s>%s", e.Tick, e.Member, m[1])]++
			}
		}
		for _, tp := range w.Layout().Outputs() {
			written += w.broker.Log(tp).HW()
		}
		return perTick, produces, w.Processed(), written
	}
	lingered, n5, proc5, out5 := run("5")
	_, n0, proc0, out0 := run("0")
	if proc5 == 0 || proc5 != proc0 || out5 != out0 {
		t.Fatalf("linger.ms 5 processed %d and wrote %d invoices, linger.ms 0 %d and %d", proc5, out5, proc0, out0)
	}
	for k, n := range lingered {
		if n > 1 {
			t.Errorf("%s: %d Produce requests in one tick to one output partition, want at most 1", k, n)
		}
	}
	if n5 >= n0 {
		t.Errorf("linger.ms 5 sent %d Produce requests, linger.ms 0 %d: gathering sent no fewer", n5, n0)
	}
	t.Logf("%d records processed, %d invoices: %d Produce requests with linger.ms 5, %d with 0", proc5, out5, n5, n0)
}

// TestLingerBatchTexts: a batch of several runs (linger.ms > 0) reads
// inv(R, R, ...) pid P epoch E seq S..L, each run R spelled as a batch of
// one run spells its sources (o0.3..o0.9, ": n" when it holds some of
// them, a record's name alone for one); written, "... written to out-N at
// offsets A..B", answered "... at offsets A..B": the log holds at A..B
// exactly the invoices the text lists, in its order, and the sequence
// numbers S..L count them.
func TestLingerBatchTexts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Client.Idempotence = true
	cfg.Client.Linger = 1
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = 1, 40
	cfg.Client.MaxPollRecords = 40
	cfg.RecordsPerPartition = 30
	topo := Topology{Group: "g", Inputs: []TopicSpec{{Name: "o", Partitions: 3}}, Output: TopicSpec{Name: "out", Partitions: 2}, Members: 1}
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for w.Tick < 60 {
		w.Step()
	}
	name := `[a-z]+-?\d+\.\d+`
	runRe := name + `(\.\.` + name + `(: \d+)?)?`
	value := `inv\((` + runRe + `(, ` + runRe + `)+)\)`
	reqRe := regexp.MustCompile(`^` + value + ` pid \d+ epoch 0 seq (\d+)\.\.(\d+)$`)
	evRe := regexp.MustCompile(`^` + value + ` written to (\S+) at offsets (\d+)\.\.(\d+)$`)
	ansRe := regexp.MustCompile(`^` + value + ` at offsets (\d+)\.\.(\d+)$`)
	requests, events, answers := 0, 0, 0
	counts := map[string]int{} // a request's sources, by their text: how many the sequence numbers say
	for _, p := range w.Packets.All() {
		if p.Type != Produce {
			continue
		}
		if m := reqRe.FindStringSubmatch(p.Summary); m != nil && !p.Response {
			first, _ := strconv.Atoi(m[len(m)-2])
			last, _ := strconv.Atoi(m[len(m)-1])
			counts[m[1]] = last - first + 1
			requests++
		} else if m := ansRe.FindStringSubmatch(p.Summary); m != nil && p.Response {
			answers++
		}
	}
	for _, e := range w.Events.All() {
		m := evRe.FindStringSubmatch(e.Text)
		if m == nil {
			continue
		}
		events++
		from, _ := strconv.Atoi(m[len(m)-2])
		to, _ := strconv.Atoi(m[len(m)-1])
		var tp wire.TopicPartition
		for _, o := range w.Layout().Outputs() {
			if o.String() == m[len(m)-3] {
				tp = o
			}
		}
		log := w.broker.Log(tp)
		var cells []string
		for i := from; i <= to; i++ {
			cells = append(cells, log.Cells.At(i).Source)
		}
		if got := listed(t, w, tp, m[1]); strings.Join(got, " ") != strings.Join(cells, " ") {
			t.Errorf("%q: the text lists %v, the log holds %v at %d..%d", e.Text, got, cells, from, to)
		}
		if n, ok := counts[m[1]]; !ok || n != to-from+1 {
			t.Errorf("%q: its request counted %d sequence numbers (found %v), it wrote %d", e.Text, n, ok, to-from+1)
		}
	}
	if requests == 0 || events != requests || answers != requests {
		t.Fatalf("%d batches of several runs sent, %d written, %d answered: want some, each written and answered once", requests, events, answers)
	}
	in := w.Layout().Inputs()
	req := &wire.ProduceRequest{Src: in[0], SrcOffset: 3, SrcEnd: 9, SrcCount: 11, Runs: []wire.SrcRun{
		{Part: 0, First: 3, Last: 9, Count: 7}, {Part: 1, First: 4, Last: 12, Count: 3}, {Part: 2, First: 5, Last: 5, Count: 1}}}
	want := "inv(" + w.layout.Name(in[0], 3) + ".." + w.layout.Name(in[0], 9) + ", " + w.layout.Name(in[1], 4) + ".." + w.layout.Name(in[1], 12) + ": 3, " + w.layout.Name(in[2], 5) + ")"
	if got := req.ValueIn(w.layout); got != want {
		t.Errorf("a batch of three runs is spelled %s, want %s", got, want)
	}
	t.Logf("%d batches of several runs", requests)
}

// listed expands a batch's sources as its text lists them (o0.3..o0.9,
// o1.4..o1.12: 3, o2.5) into record names, for output partition tp: a
// run's records from its first to its last that the partitioner sends to
// tp (all of them when it says no count).
func listed(t *testing.T, w *World, tp wire.TopicPartition, text string) []string {
	t.Helper()
	slot := -1
	for i, o := range w.Layout().Outputs() {
		if o == tp {
			slot = i
		}
	}
	parse := func(name string) (wire.TopicPartition, int) {
		for _, in := range w.Layout().Inputs() {
			for off := 0; off < w.broker.Log(in).HW(); off++ {
				if w.layout.Name(in, off) == name {
					return in, off
				}
			}
		}
		t.Fatalf("%q names no input record", name)
		return wire.TopicPartition{}, 0
	}
	var out []string
	for _, run := range strings.Split(text, ", ") {
		run, count, counted := strings.Cut(run, ": ")
		a, b, ok := strings.Cut(run, "..")
		if !ok {
			out = append(out, a)
			continue
		}
		tp1, first := parse(a)
		_, last := parse(b)
		n := 0
		for off := first; off <= last; off++ {
			if !counted || w.Layout().Partitioner(tp1).Slot(off) == slot {
				out = append(out, w.layout.Name(tp1, off))
				n++
			}
		}
		if counted && strconv.Itoa(n) != count {
			t.Errorf("%s: %s of its records, the partitioner sends %d", run, count, n)
		}
	}
	return out
}

// TestLingerSetting: linger.ms takes 0 (at once) and up on the page's
// scale; in real time any milliseconds from 0, a value under a tick
// rounded up to one (any linger gathers a tick) rather than refused, and
// no bar to a longer tick.ms. Anything else is refused with the rule.
func TestLingerSetting(t *testing.T) {
	c := DefaultConfig()
	if c.Client.Linger != 0 {
		t.Fatalf("the page's linger.ms is %d, want 0 (a Produce per run, at once)", c.Client.Linger)
	}
	for _, bad := range []string{"-1", "x", "1.5", "1000001"} {
		err := c.Set("", "linger.ms", bad)
		if err == nil || !strings.Contains(err.Error(), `linger.ms: "`+bad+`" is not a whole number from 0 to 1000000: 0 sends each run's invoices at once`) {
			t.Errorf("set linger.ms %s: %v", bad, err)
		}
	}
	if err := c.Set("C2", "linger.ms", "3"); err != nil || c.Engine("C2").Linger != 3 || c.Engine("C1").Linger != 0 {
		t.Fatalf("set C2.linger.ms 3: %v, C2 %d, C1 %d", err, c.Engine("C2").Linger, c.Engine("C1").Linger)
	}
	k := KafkaDefaultConfig()
	if e := k.Engine("C1"); e.Linger != 1 {
		t.Errorf("Kafka's linger.ms 5 at tick.ms 5 runs as %d ticks, want 1", e.Linger)
	}
	if err := k.Set("", "linger.ms", "2"); err != nil || k.Engine("C1").Linger != 1 {
		t.Errorf("real time, linger.ms 2 under a 5 ms tick: %v, %d ticks (want 1)", err, k.Engine("C1").Linger)
	}
	if err := k.Set("", "linger.ms", "-5"); err == nil || !strings.Contains(err.Error(), "is not a whole number of milliseconds from 0 to 2147483647") {
		t.Errorf("real time, linger.ms -5: %v", err)
	}
	if err := k.Set("", "tick.ms", "50"); err != nil {
		t.Errorf("tick.ms 50 with linger.ms 2: %v (a linger under a tick is no bar)", err)
	}
	if err := k.Set("", "time", "ticks"); err != nil || k.Client.Linger != 1 {
		t.Errorf("time ticks: %v, linger.ms %d ticks, want 1", err, k.Client.Linger)
	}
}
