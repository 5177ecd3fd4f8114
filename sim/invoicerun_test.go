package sim

import (
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestPropertyInvoiceRunsAsPerRecord: random worlds (plain, idempotent and
// transactional producers, read_committed on some seeds, crashes,
// restarts, records appended) each run twice from one schedule, a running
// member now and then sending the invoices of a run of input records: in
// one world as batches (produceInvoiceRun: one Produce per output
// partition, base sequence and count), in the other one Produce a record
// (produceInvoice, as before batches). At every tick both worlds' output
// logs hold the same records, cell by cell (value, source, producer,
// producer id, epoch, sequence number, transaction mark, tick: At/All),
// with the same LSO and aborted ranges.
func TestPropertyInvoiceRunsAsPerRecord(t *testing.T) {
	seeds := 18
	if testing.Short() {
		seeds = 6
	}
	batches := 0
	// The wide seeds (after seeds) have 2, 3, 4 or 8 output partitions and
	// runs of up to 150 records from anywhere in 300: runs across
	// hundreds, whose slots the layout's pattern gives (topo.slotPattern)
	// when the output partitions are a power of two.
	const wideSeeds = 8
	for seed := 0; seed < seeds+wideSeeds; seed++ {
		proto := protocols[seed%len(protocols)]
		wide := seed >= seeds
		name := fmt.Sprintf("%s-seed%d", proto, seed)
		if wide {
			name = fmt.Sprintf("%s-wide-seed%d", proto, seed)
		}
		t.Run(name, func(t *testing.T) {
			mk := func() (*World, []action) {
				spec := propertyCase(proto)
				spec.transactional = seedsAt(3, 1)
				spec.idempotent = seedsAt(3, 2)
				spec.readCommitted = seedsAt(2, 1)
				spec.records = span{20, 20}
				if wide {
					spec.records = span{300, 1}
					spec.topology = func(_ *rand.Rand, seed int) Topology {
						top := DefaultTopology()
						top.Output.Partitions = []int{4, 2, 8, 3}[seed%4]
						return top
					}
				}
				sc := seedWorld(t, seed, spec)
				r, topo, cfg := sc.r, sc.topo, sc.cfg
				w, err := New(topo, cfg)
				if err != nil {
					t.Fatal(err)
				}
				var sched []action
				for _, a := range randomSchedule(r, 150, 4, true) {
					// A lost answer has a batch sent again whole, a record
					// alone: the same records only where the leader drops
					// what it has (idempotence, seeds 1 and 2 mod 3).
					if !strings.HasPrefix(a.name, "drop") || seed%3 != 0 {
						sched = append(sched, a)
					}
				}
				for tick := 0; tick < 150; tick++ {
					if r.Intn(4) != 0 {
						continue
					}
					c, k, first, count := fmt.Sprintf("C%d", 1+r.Intn(4)), r.Intn(100), r.Intn(25), 1+r.Intn(12)
					if wide {
						first, count = r.Intn(300), 1+r.Intn(150)
					}
					sched = append(sched, action{tick: tick, name: fmt.Sprintf("invoices %s %d+%d by %s", "tp", first, count, c),
						do: func(w *World) error { return invoiceRun(w, c, k, first, count) }})
				}
				sortActions(sched)
				return w, sched
			}
			runs, sched := mk()
			each, _ := mk()
			i := 0
			for runs.Tick < 170 {
				for i < len(sched) && sched[i].tick <= runs.Tick {
					a := sched[i]
					if strings.HasPrefix(a.name, "invoices") {
						perRecordInvoices = true
						e2 := a.do(each)
						perRecordInvoices = false
						if e1 := a.do(runs); fmt.Sprint(e1) != fmt.Sprint(e2) {
							t.Fatalf("tick %d: %s: %v against %v per record", runs.Tick, a.name, e1, e2)
						}
					} else if e1, e2 := a.do(runs), a.do(each); fmt.Sprint(e1) != fmt.Sprint(e2) {
						t.Fatalf("tick %d: %s: %v against %v", runs.Tick, a.name, e1, e2)
					}
					i++
				}
				runs.Step()
				each.Step()
				if a, b := outputState(runs), outputState(each); a != b {
					t.Fatalf("tick %d: the output logs differ (schedule so far: %s):\n%s", runs.Tick, names(sched[:i]), firstDiff(a, b))
				}
			}
			for _, p := range runs.Packets.All() {
				if p.Type == Produce && !p.Response && strings.Contains(p.Summary, "..") {
					batches++
				}
			}
		})
	}
	if batches == 0 {
		t.Fatal("no batch of invoices was sent")
	}
	t.Logf("%d batches sent", batches)
}

// perRecordInvoices makes invoiceRun send one Produce a record.
var perRecordInvoices bool

// invoiceRun has client's process, when it runs, send the invoices of
// count input records from first of the k-th input partition (mod their
// number), as far as the partition holds records.
func invoiceRun(w *World, client string, k, first, count int) error {
	m := w.current[client]
	if m == nil || !m.Alive {
		return fmt.Errorf("%s is not running", client)
	}
	tps := w.layout.Inputs()
	tp := tps[k%len(tps)]
	hw := w.broker.Log(tp).HW()
	if first >= hw {
		return fmt.Errorf("%s holds %d records", tp, hw)
	}
	if !m.ProduceInvoiceRunForTest(tp, int32(k%len(tps)+1), first, min(count, hw-first), perRecordInvoices) {
		return fmt.Errorf("%s is not processing", client)
	}
	return nil
}

// outputState is every output log's records, cell by cell, its LSO and
// aborted ranges.
func outputState(w *World) string {
	var b strings.Builder
	for _, tp := range w.layout.Outputs() {
		l := w.broker.Log(tp)
		fmt.Fprintf(&b, "%s hw %d lso %d aborted %v\n", tp, l.HW(), l.LSO(), l.Aborted)
		for off, c := range l.Cells.All() {
			fmt.Fprintf(&b, "  %d %+v\n", off, c)
		}
	}
	return b.String()
}

// TestInvoiceBatchTexts: what a batch of invoices writes in the trace. An
// idempotent member sends the invoices of input records 0..5 (o-0.0 ..
// o-0.5) to a one-partition output while it processes: one Produce
// "inv(o-0.0..o-0.5) pid 1000 epoch 0 seq 0..5", written at six offsets
// ("... written to out-0 at offsets 0..5", answered "... at offsets
// 0..5"); its answer lost, the batch goes again whole ("(retry)") and the
// leader answers that it has those sequence numbers already, writing
// nothing. A batch of some of a run's records reads inv(o0.3..o0.9: 3).
func TestInvoiceBatchTexts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Client.Idempotence = true
	cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = 4, 1
	topo := Topology{Group: "g", Inputs: []TopicSpec{{Name: "o", Partitions: 1}}, Output: TopicSpec{Name: "out", Partitions: 1}, Members: 1}
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := w.layout.Inputs()[0]
	for w.current["C1"] == nil || w.current["C1"].Hooks().Loop().String() != "processing" {
		if w.Tick > 100 {
			t.Fatal("C1 never processed a record")
		}
		w.Step()
	}
	p0 := w.Packets.Len()
	w.Drop(DropRule{Type: Produce, Response: true, To: "C1", Count: 1})
	if !w.current["C1"].ProduceInvoiceRunForTest(in, 1, 0, 6, false) {
		t.Fatal("C1 processing, yet it sent no batch")
	}
	for w.Tick < 60 {
		w.Step()
	}
	run := regexp.QuoteMeta("inv(" + w.layout.Name(in, 0) + ".." + w.layout.Name(in, 5) + ")")
	var req, ans, retry, dup, ev string
	for i := p0; i < w.Packets.Len(); i++ {
		p := w.Packets.At(i)
		switch {
		case p.Type != Produce || !regexp.MustCompile("^"+run).MatchString(p.Summary):
		case !p.Response && !strings.HasSuffix(p.Summary, "(retry)"):
			req = p.Summary
		case !p.Response:
			retry = p.Summary
		case strings.Contains(p.Summary, "already"):
			dup = p.Summary
		default:
			ans = p.Summary + fmt.Sprintf(" lost=%v", p.Lost)
		}
	}
	for _, e := range w.Events.All() {
		if regexp.MustCompile("^" + run + " written").MatchString(e.Text) {
			ev = e.Text
		}
	}
	re := func(what, got, pattern string) {
		t.Helper()
		if !regexp.MustCompile("^" + pattern + "$").MatchString(got) {
			t.Errorf("%s: %q, want %s", what, got, pattern)
		}
	}
	re("request", req, run+` pid \d+ epoch 0 seq \d+\.\.\d+`)
	re("retry", retry, run+` pid \d+ epoch 0 seq \d+\.\.\d+ \(retry\)`)
	re("answer", ans, run+` at offsets \d+\.\.\d+ lost=true`)
	re("duplicate", dup, run+` seq \d+\.\.\d+ already at offsets \d+\.\.\d+: not written again`)
	re("event", ev, run+` written to out-0 at offsets \d+\.\.\d+`)
	t.Logf("%s\n%s\n%s\n%s\n%s", req, ans, ev, retry, dup)
	out := w.broker.Log(w.layout.Outputs()[0])
	n := 0
	for _, c := range out.Cells.All() {
		if c.Producer == "C1" && c.Tick == 1+w.Packets.At(p0).Sent && c.Seq >= 0 {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d invoices written the tick after the batch, want its 6 (written once): %v", n, out.Cells.Slice(0, out.HW()))
	}
	if got, want := (&wire.ProduceRequest{Src: in, SrcOffset: 3, SrcEnd: 9, SrcCount: 3}).ValueIn(w.layout), "inv("+w.layout.Name(in, 3)+".."+w.layout.Name(in, 9)+": 3)"; got != want {
		t.Errorf("a batch of some of a run's records is spelled %s, want %s", got, want)
	}
}
