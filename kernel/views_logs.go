package kernel

// The views of a topic's records: `log` (a partition as kafka-dump-log
// prints it), `txn` (the transaction coordinator's state) and `consume`
// (what a consumer reads, at either isolation level).

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// aroundRows is how many rows `log --around OFFSET` shows on each side.
const aroundRows = 4

func cmdLog(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("log", args, []string{"--from", "--around"}, nil)
	if err != nil {
		return nil, err
	}
	if err := needArgs("log", pos, 1, 1); err != nil {
		return nil, err
	}
	w := s.World()
	tp, err := w.Layout().ParsePartition(pos[0])
	if err != nil {
		return nil, fmt.Errorf("log: %v", err)
	}
	l := w.Log(tp)
	from, to, err := logRows(pos[0], fl, l.Start(), l.HW())
	if err != nil {
		return nil, err
	}
	// The aborted transaction index: all of it, or in a view of some of
	// the log (--from, --around) the transactions that reach its rows.
	narrowed := from > l.Start() || to < l.HW()
	var aborted []string
	for _, a := range l.Aborted {
		if !narrowed || a.Last >= from && a.First < to {
			aborted = append(aborted, fmt.Sprintf("pid %d offsets %d..%d", a.PID, a.First, a.Last))
		}
		if len(aborted) > limitViewRows.max {
			break // refused below
		}
	}
	if err := checkRows("log", to-from+len(aborted), "cells and aborted transactions of "+tp.String(), "log "+pos[0]+" --from OFFSET starts at an offset, --around OFFSET shows a few"); err != nil {
		return nil, err
	}
	text, t, err := s.render("log", to-from, []string{"OFFSET", "VALUE", "PRODUCER", "PID", "EPOCH", "SEQ", "TXN", "READ_COMMITTED"}, func(emit func(...string) error) error {
		for i := from; i < to; i++ {
			c := l.Cells.At(i)
			pid, epoch, seq := "-", "-", "-"
			if c.PID >= 0 {
				pid, epoch = strconv.FormatInt(c.PID, 10), strconv.Itoa(c.Epoch)
			}
			if c.Seq >= 0 {
				seq = strconv.Itoa(c.Seq)
			}
			val := c.Value
			state := c.Txn.String()
			if c.Txn == sim.TxnAborted && c.IsData() {
				val += " ✗"
			}
			if !c.IsData() {
				state = "marker"
			}
			rc := "no"
			if l.ReadCommitted(i) {
				rc = "yes"
			}
			if err := emit(strconv.Itoa(i), val, dash(c.Producer), pid, epoch, seq, state, rc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("%s  HW %d  LSO %d", tp, l.HW(), l.LSO())
	if l.Start() > 0 {
		head += fmt.Sprintf("  log start %d (the cells before it let go of: history.ms)", l.Start())
	}
	if rec, ok := w.Group.Offsets.Committed(tp); ok {
		head += fmt.Sprintf("  committed %d (%s, generation %d)", rec.Offset, rec.MemberID, rec.Generation)
	}
	if narrowed {
		switch {
		case from == to:
			head += fmt.Sprintf("  (no rows from offset %d)", from)
		default:
			head += fmt.Sprintf("  (offsets %d..%d of %d..%d)", from, to-1, l.Start(), l.HW()-1)
		}
	}
	if len(aborted) > 0 {
		head += "\naborted transaction index: " + strings.Join(aborted, "; ")
	}
	return &Result{Text: head + "\n" + text, Table: t, HTML: s.htmlOf(t)}, nil
}

// logRows is the offsets [from, to) a log view shows: all of them from
// the log's start, from --from N to the end, or --around OFFSET's
// aroundRows on each side (none below the start).
func logRows(part string, fl map[string]string, start, hw int) (from, to int, err error) {
	f, hasFrom := fl["--from"]
	a, hasAround := fl["--around"]
	switch {
	case hasFrom && hasAround:
		return 0, 0, usageErr("log", "--from and --around contradict each other (give one)")
	case hasFrom:
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return 0, 0, usageErr("log", "--from %q is not an offset (a whole number from 0 to the HW, %d)", f, hw)
		}
		if n > hw {
			return 0, 0, fmt.Errorf("log %s --from %d: past the end of the log (HW %d: offsets 0..%d; --from at most %d)", part, n, hw, hw-1, hw)
		}
		if n < start {
			return 0, 0, forgottenErr(part, "--from", n, start, hw)
		}
		return n, hw, nil
	case hasAround:
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			return 0, 0, usageErr("log", "--around %q is not an offset (a whole number from 0 to %d)", a, hw-1)
		}
		if n >= hw {
			if hw == 0 {
				return 0, 0, fmt.Errorf("log %s --around %d: the log is empty (HW 0)", part, n)
			}
			return 0, 0, fmt.Errorf("log %s --around %d: no such offset (HW %d: offsets 0..%d)", part, n, hw, hw-1)
		}
		if n < start {
			return 0, 0, forgottenErr(part, "--around", n, start, hw)
		}
		return max(start, n-aroundRows), min(hw, n+aroundRows+1), nil
	}
	return start, hw, nil
}

// forgottenErr refuses a log view at offset n, below the log's start.
func forgottenErr(part, flag string, n, start, hw int) error {
	return fmt.Errorf("log %s %s %d: the cells before offset %d were let go of (history.ms keeps only a window of the past; offsets %d..%d are kept)", part, flag, n, start, start, hw-1)
}

func cmdTxn(s *Session, args []string) (*Result, error) {
	if err := needArgs("txn", args, 0, 1); err != nil {
		return nil, err
	}
	w := s.World()
	entries := w.Txn.Entries()
	if len(args) == 1 {
		e := w.Txn.Entry(args[0])
		if e == nil {
			var ids []string
			for _, e := range entries {
				ids = append(ids, e.TransactionalID)
			}
			return nil, fmt.Errorf("txn %s: no transactional.id %s (known: %s)", args[0], args[0], dash(strings.Join(ids, " ")))
		}
		entries = []*sim.TxnEntry{e}
	}
	if err := checkRows("txn", len(entries), "transactional ids", "txn ID shows one"); err != nil {
		return nil, err
	}
	t := &Table{Header: []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationTimeMs", "TopicPartitions"}}
	for i, e := range entries {
		if err := s.pollRow("txn", i); err != nil {
			return nil, err
		}
		start, dur := "None", "None"
		if e.Start >= 0 {
			start, dur = strconv.Itoa(e.Start), strconv.Itoa(w.Tick-e.Start)
		}
		parts := tpNames(e.Partitions)
		if e.Group != "" {
			parts = append(parts, "__consumer_offsets("+e.Group+")")
		}
		t.Add("1", e.TransactionalID, strconv.FormatInt(e.PID, 10), strconv.Itoa(e.Epoch), string(e.State),
			strconv.Itoa(e.Timeout), start, dur, dash(strings.Join(parts, ",")))
	}
	if len(entries) == 0 {
		return &Result{Text: "no transactional producers yet (set producer transactional)"}, nil
	}
	// kafka-transactions.sh's columns make a 190-column line: a field per
	// line when it does not fit; notebooks get the table.
	text := t.Fit(textWidth)
	if text != t.Text() {
		return &Result{Text: text, HTML: s.htmlOf(t)}, nil
	}
	return &Result{Text: text, Table: t, HTML: s.htmlOf(t)}, nil
}

type consumeJSON struct {
	Topic     string       `json:"topic"`
	Isolation string       `json:"isolation"`
	Records   []recordJSON `json:"records"`
}

type recordJSON struct {
	Partition string `json:"partition"`
	Offset    int    `json:"offset"`
	Value     string `json:"value"`
	Aborted   bool   `json:"aborted"`
	Open      bool   `json:"open"`
	// Invoice numbers the invoices of one input record as this reader
	// meets them (output topic only): 2 and up are duplicates.
	Invoice int `json:"invoice,omitempty"`
}

func cmdConsume(s *Session, args []string) (*Result, error) {
	pos, fl, lw, err := listArgs("consume", args, append([]string{"--isolation"}, listFlags...), []string{"--json"}, 1, 1, "OFFSET")
	if err != nil {
		return nil, err
	}
	w := s.World()
	if !w.Layout().HasTopic(pos[0]) {
		return nil, fmt.Errorf("consume %s: no topic %s (topics: %s)", pos[0], pos[0], strings.Join(topicList(w), " "))
	}
	iso := w.Cfg.Isolation
	if v, ok := fl["--isolation"]; ok {
		if v != "read_committed" && v != "read_uncommitted" {
			return nil, usageErr("consume", "--isolation %q is not read_committed or read_uncommitted", v)
		}
		iso = v
	}
	rd, delivered := newTopicReader(w, pos[0], iso)
	// The records the view lists (from --from's offset of each
	// partition), counted before any is made.
	n, err := rd.count(s, lw.from)
	if err != nil {
		return nil, err
	}
	lo, hi := listWindow{last: lw.last}.rows(n, nil)
	if err := checkRows("consume", hi-lo, "records of "+pos[0], "consume "+pos[0]+" --last N shows the last N, --from OFFSET each partition from an offset on"); err != nil {
		return nil, err
	}
	// The listed records with the n-th invoice of their input record, as
	// this reader meets them from offset 0 (as sim.World.Delivery counts
	// duplicates), those a log let go of (history.ms) counted before its
	// start; each call reads them again: where they are and their counts
	// first (listed, by runs of cells), then each record as it is written.
	each := func(f func(r sim.ReadRecord, nth int) error) error {
		items, err := rd.listed(s, lw.from, lo, hi)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := f(it.r, it.nth+rd.forgotInvoices(it.r.Source, it.pi)); err != nil {
				return err
			}
		}
		return nil
	}
	if fl["--json"] == "true" {
		// consumeJSON's own encoding, its records written one by one.
		head, _ := json.Marshal(consumeJSON{Topic: pos[0], Isolation: iso, Records: []recordJSON{}})
		var b strings.Builder
		b.WriteString(strings.TrimSuffix(string(head), "[]}"))
		if err := s.jsonList("consume", &b, func(emit func(any) error) error {
			return each(func(r sim.ReadRecord, nth int) error {
				return emit(recordJSON{Partition: r.Partition.String(), Offset: r.Offset, Value: r.Value, Aborted: r.Aborted, Open: r.Open, Invoice: nth})
			})
		}); err != nil {
			return nil, err
		}
		b.WriteByte('}')
		line := b.String()
		return &Result{Text: line, JSON: line}, nil
	}
	text, t, err := s.render("consume", hi-lo, []string{"PARTITION", "OFFSET", "VALUE", "NOTE"}, func(emit func(...string) error) error {
		return each(func(r sim.ReadRecord, nth int) error {
			var notes []string
			switch {
			case r.Aborted:
				notes = append(notes, "aborted ✗")
			case r.Open:
				notes = append(notes, "open transaction")
			}
			if nth > 1 {
				notes = append(notes, fmt.Sprintf("duplicate ×%d (invoice %d of %s)", nth, nth, r.Source))
			}
			return emit(r.Partition.String(), strconv.Itoa(r.Offset), r.Value, strings.Join(notes, " · "))
		})
	})
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("%s at %s: %d record(s)", pos[0], iso, hi-lo)
	if pos[0] == w.Topo.Output.Name {
		c := delivered
		head += fmt.Sprintf("; duplicates %d%s; lost %d%s", c.Duplicates, nameList(c.DuplicateNames), c.Lost, nameList(c.LostNames))
		if c.HeldBack > 0 {
			head += fmt.Sprintf("; held back by the LSO %d%s", c.HeldBack, nameList(c.HeldBackNames))
		}
	}
	return &Result{Text: head + "\n" + text, Table: t, HTML: s.htmlOf(t)}, nil
}

// topicReader is the audit reader (sim.World.ReadTopic) record by record:
// the topic's partitions in the world's order, each from offset 0, its
// data records (no markers), at read_committed only those a
// read_committed reader returns. It builds a record only when asked for
// one, so counting costs no allocation and a view of a few records of a
// long topic builds a few. (TestTopicReaderIsReadTopic checks it against
// ReadTopic.)
type topicReader struct {
	w          *sim.World
	topic, iso string
	// dups, when not nil, are the sources with more than one invoice
	// this reader sees (sim.World.Delivery's DuplicateNames at its level,
	// for the output topic): any other listed record is its source's
	// first and only invoice, counted without reading the topic.
	dups map[string]bool
}

// newTopicReader is the reader of topic at isolation level iso; of the
// output topic, with the duplicates it sees (Delivery at its level, also
// returned), so that a listed record not among them needs no count.
func newTopicReader(w *sim.World, topic, iso string) (topicReader, sim.Counts) {
	rd := topicReader{w: w, topic: topic, iso: iso}
	if topic != w.Topo.Output.Name {
		return rd, sim.Counts{}
	}
	c := w.Delivery(iso)
	rd.dups = c.Duplicated()
	return rd, c
}

func (rd topicReader) partitions() []sim.TopicPartition {
	var out []sim.TopicPartition
	for _, tp := range append(append([]sim.TopicPartition{}, rd.w.Layout().Inputs()...), rd.w.Layout().Outputs()...) {
		if tp.Topic == rd.topic {
			out = append(out, tp)
		}
	}
	return out
}

// record is the record at offset i of partition tp, as ReadTopic returns it.
func (rd topicReader) record(tp sim.TopicPartition, i int) sim.ReadRecord {
	c := rd.w.Log(tp).Cells.At(i)
	return sim.ReadRecord{Partition: tp, Offset: i, Value: c.Value, Source: c.Source, Aborted: c.Txn == sim.TxnAborted, Open: c.Txn == sim.TxnOpen}
}

// forgotInvoices is how many invoices of the input record named source
// this reader met in the cells its partitions up to through (its place
// in the reader's order) let go of (history.ms), before their starts.
func (rd topicReader) forgotInvoices(source string, through int) int {
	return rd.w.ForgotInvoices(rd.partitions(), through, source, rd.iso == "read_committed")
}

// count counts the records at offset from or later, looking for Ctrl-C.
func (rd topicReader) count(s *Session, from int) (int, error) {
	n := 0
	for pi, tp := range rd.partitions() {
		if err := rd.stretches(s, pi, tp, from, func(_, c int) bool {
			n += c
			return true
		}); err != nil {
			return n, err
		}
	}
	return n, nil
}

// stretches gives f the stretches of cells (the first, how many) the
// reader returns in its partition tp (pi its place) from offset from on,
// until f returns false: a log no transaction ever wrote to (Log.
// EverTransactional) is one stretch, every cell from there to its high
// watermark a record at either level, known without reading one; another
// log's are its runs (partitionRuns).
func (rd topicReader) stretches(s *Session, pi int, tp sim.TopicPartition, from int, f func(i, n int) bool) error {
	if l := rd.w.Log(tp); !l.EverTransactional() {
		if first, end := min(max(from, l.Start()), l.HW()), l.HW(); first < end {
			f(first, end-first)
		}
		return nil
	}
	return rd.partitionRuns(s, pi, tp, from, func(_ int, _ *sim.PartitionLog, r sim.CellRun) bool { return f(r.I, r.N) })
}

// runs gives f the runs of cells the reader returns (Cells.Runs: data
// cells, no markers; at read_committed those below the LSO of a
// transaction committed or none), from offset from on, partition by
// partition in the reader's order (pi: the partition's place in it),
// until f returns false; it looks for Ctrl-C a run at a time. Its cost is
// per run, not per record: a long topic's view of its last records, or
// its count, reads its runs, not its millions of records.
func (rd topicReader) runs(s *Session, from int, f func(pi int, l *sim.PartitionLog, r sim.CellRun) bool) error {
	stopped := false
	for pi, tp := range rd.partitions() {
		if err := rd.partitionRuns(s, pi, tp, from, func(pi int, l *sim.PartitionLog, r sim.CellRun) bool {
			stopped = !f(pi, l, r)
			return !stopped
		}); err != nil || stopped {
			return err
		}
	}
	return nil
}

// partitionRuns is runs for the reader's partition tp (pi its place).
func (rd topicReader) partitionRuns(s *Session, pi int, tp sim.TopicPartition, from int, f func(pi int, l *sim.PartitionLog, r sim.CellRun) bool) error {
	l := rd.w.Log(tp)
	lso, hw := l.LSO(), l.HW()
	cut := hw
	if rd.iso == "read_committed" {
		cut = lso
	}
	seen := 0
	for r := range l.Cells.RunsFrom(max(from, l.Start()), cut, hw) {
		if err := s.pollRow("consume", seen); err != nil {
			return err
		}
		seen++
		if rd.iso == "read_committed" && (r.I >= lso || r.Txn == sim.TxnAborted || r.Txn == sim.TxnOpen) {
			continue // what Log.ReadCommitted leaves out, a run at a time
		}
		if !f(pi, l, r) {
			return nil
		}
	}
	return nil
}

// listedRecord is a record the consume view lists (r), its partition's
// place in the reader's order (pi), and how many of the reader's records
// from its log's start up to it (it included) are invoices of its input
// record (nth; 0 for a record with no source).
type listedRecord struct {
	pi  int
	r   sim.ReadRecord
	nth int
}

// listed is the reader's records k = lo .. hi-1 of those at offset from or
// later, in its order, each with its nth (the n-th invoice of its input
// record it is, counted over the records before it from offset 0: the
// cells a log let go of are forgotInvoices'). It reads runs, not records:
// the records' places from the stretches from offset from on, then their
// counts in one pass over every run from the start (sim.World.
// CountInvoices).
func (rd topicReader) listed(s *Session, from, lo, hi int) ([]listedRecord, error) {
	var items []listedRecord
	parts := rd.partitions()
	k := 0 // the records of the partitions before
	for pi, tp := range parts {
		if k >= hi {
			break
		}
		if err := rd.stretches(s, pi, tp, from, func(i, n int) bool {
			for j := max(lo-k, 0); j < n && k+j < hi; j++ {
				items = append(items, listedRecord{pi: pi, r: rd.record(tp, i+j)})
			}
			k += n
			return k < hi
		}); err != nil {
			return items, err
		}
	}
	if len(items) == 0 {
		return items, nil
	}
	var asks []sim.InvoiceAsk
	var asked []int // the items asked for, by ask
	for x, it := range items {
		switch {
		case it.r.Source == "":
		case rd.dups != nil && !rd.dups[it.r.Source]:
			items[x].nth = 1 // its source's one invoice (forgotInvoices adds none: it is not a duplicate)
		default:
			asks = append(asks, sim.InvoiceAsk{Log: it.pi, Cell: it.r.Offset, Source: it.r.Source})
			asked = append(asked, x)
		}
	}
	if len(asks) == 0 {
		return items, nil
	}
	err := rd.w.CountInvoices(parts, asks, func(f func(li int, r sim.CellRun) bool) error {
		return rd.runs(s, 0, func(pi int, _ *sim.PartitionLog, r sim.CellRun) bool { return f(pi, r) })
	})
	for k, x := range asked {
		items[x].nth = asks[k].Nth
	}
	return items, err
}

func nameList(names []string) string {
	if len(names) == 0 {
		return ""
	}
	if len(names) > 12 {
		return " (" + strings.Join(names[:12], " ") + " ...)"
	}
	return " (" + strings.Join(names, " ") + ")"
}

func topicList(w *sim.World) []string {
	var out []string
	for _, t := range w.Topo.Inputs {
		out = append(out, t.Name)
	}
	return append(out, w.Topo.Output.Name)
}
