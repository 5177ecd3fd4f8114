package broker

import (
	"iter"
	"sort"

	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// CellLog is a partition's cells, stored compactly; At and All give back
// the Cell that was appended, field for field.
//
// The cells are the bulk of a world's memory (an input partition of
// 1,000,000 records, a cell per invoice for every tick of traffic), and most
// of a Cell is derivable: an input record's value is its name, which its
// partition and offset spell (World.RecordName); an invoice's value is
// "inv(" + its source + ")", and its source is an input record, kept as a
// reference (partition index and offset); a marker's value is its control
// type. So a log keeps:
//   - while it holds only records of the upstream producer (an input
//     partition), just the ticks they were appended at, one run per append
//     (8 bytes a run, not a cell: 1,000,000 records at tick 0 are one run);
//   - otherwise a 12-byte cellRec per cell, its producer as an index into
//     the log's own list of producer names, its tick as a distance from its
//     chunk's first cell's;
//   - and, for a cell that does not fit those shapes (a value or source that
//     is not a record's name), its strings in a side list, so that nothing
//     is ever lost, only the usual cells are small.
//
// Every list is a Seq: full chunks are shared between clones and copied
// before a transaction marker changes a cell in one (copy-on-write).
//
// n, inRecs and st come first, together: a Fetch reads them for each of
// its partitions (Len, PlainRun), most of which have nothing for it.
type CellLog struct {
	n int // cells
	// inRecs is false while every cell is an upstream record with no
	// producer id: then runs holds them and recs is empty. The first other
	// cell moves them all to recs.
	inRecs bool
	// everTxn is true once a transactional cell or a marker was appended
	// (Log.opening): until then every cell is a record a reader returns at
	// either isolation level. Beside inRecs, where it costs no byte.
	everTxn bool
	// st is the log's steady production (steady.go), nil for a log that
	// never had it: a run whose tick is -1-k holds its segment k's
	// records; while the last is open its records are past n.
	st    *logSteady
	tp    wire.TopicPartition
	names *topo.Layout // shared, read-only
	runs  store.Seq[tickRun]
	recs  store.Seq[cellRec]
	// bases is the tick of each chunk of recs' first cell (one per
	// seqChunk cells): a cellRec keeps its tick as the distance from it.
	// A cell whose tick does not fit (farField) keeps it in farTicks, by
	// offset in offset order.
	bases store.Seq[int32]
	base  int32 // the open chunk's, the last of bases
	// startOff is the log start offset (Kafka's logStartOffset): the cells
	// below it were let go of (forget.go), and every reader begins here.
	// 32 bits beside base, where it costs no byte (a world of 100,000
	// partitions holds two logs a partition with a step's copy).
	startOff int32
	farTicks store.Seq[tickRun]
	others   store.Seq[otherCell]
	// producers are the client ids that wrote here; cellRec.producer is an
	// index into it plus one (0: the upstream producer, ""). Append-only:
	// clones share it with its capacity cut, so an append on either side
	// copies it (it is as long as the number of clients that ever wrote).
	producers []string
	// producerIdx is producers' index plus one by name, built at the first
	// lookup past producerScan names: a log written by 10,000 clients
	// scanned 5,000 names a cell. This log's own, never shared: a clone
	// starts without it.
	producerIdx map[string]uint16
	// writers are who wrote the cells (producer id, epoch, producer name),
	// each once: cellRec's writer is an index into it. Append-only, shared
	// with clones as producers is. A cell whose writer does not fit in 12
	// bits (4,095 writers before it) or whose sequence number does not fit
	// in 24 keeps farWriter, and its writer and sequence number in far, by
	// offset in offset order.
	writers []cellWriter
	far     store.Seq[farCell]
	// spans are the batches of invoices kept as one entry each (cellSpan):
	// their cells are not in recs, so a cell after the first span is at
	// recs index offset less the spans' cells before it (locate); and
	// what only spans need (spanStore). (nil, 8 bytes, for a log that
	// never had one: most logs.)
	spans *spanStore
}

// cellWriter is who wrote a cell: its producer id and epoch, and its
// producer's name as an index into producers plus one (0 for "").
type cellWriter struct {
	pid      int64
	epoch    int32
	producer uint16
}

type farCell struct {
	off int32
	seq int32
	w   cellWriter
}

const farWriter = 1<<12 - 1

// maxWriters is how many writers a log lists before it keeps the next in
// far: farWriter (a var only so that tests can make it tiny).
var maxWriters = farWriter

// tickRun is a run of upstream records appended at one tick, from offset
// first to the next run's first.
type tickRun struct {
	first, tick int32
}

// cellRec is one cell, without its strings and its writer (12 bytes
// against a Cell's 112 plus its strings). The offset is the index. A cell
// is kept here whole when its sequence number is below 2^24-1 and its
// source partition's number below 4,096 (else its sequence number is kept
// with its writer in far, and its source in others); its tick is kept
// apart (farTicks) when 255 or more ticks past its chunk's first.
type cellRec struct {
	srcOff int32 // cellInvoice: the source record's offset; cellOther: index in others
	// seqTick: the producer sequence number plus one (low 24 bits: 0 for
	// -1, 0 too for one kept in far) and the tick minus its chunk's base
	// tick (CellLog.bases; high 8 bits: farTick for one kept in farTicks).
	seqTick uint32
	// bits: the source partition's index among the input partitions
	// (cellInvoice; low 12 bits), the writer (index in writers, farWriter:
	// in far; next 12 bits), the kind (3 bits) and the TxnMark (3 bits).
	bits uint32
}

const (
	farTick     = 0xff      // a cellRec's tick kept in farTicks
	maxCellSeq  = 1<<24 - 2 // the largest sequence number a cellRec keeps
	maxSrcPart  = 1<<12 - 1 // the largest source partition number a cellRec keeps
	cellKindAt  = 24        // the kind's place in cellRec.bits
	cellTxnAt   = 27        // the TxnMark's place in cellRec.bits
	cellWriteAt = 12        // the writer's place in cellRec.bits
)

func (r cellRec) srcPart() int      { return int(r.bits & maxSrcPart) }
func (r cellRec) writer() int       { return int(r.bits >> cellWriteAt & farWriter) }
func (r cellRec) kind() cellKind    { return cellKind(r.bits >> cellKindAt & 7) }
func (r cellRec) txn() TxnMark      { return TxnMark(r.bits >> cellTxnAt & 7) }
func (r cellRec) tick() uint32      { return r.seqTick >> 24 }
func (r cellRec) seq() int32        { return int32(r.seqTick&(1<<24-1)) - 1 }
func (r *cellRec) setTxn(m TxnMark) { r.bits = r.bits&^(7<<cellTxnAt) | uint32(m)<<cellTxnAt }

// invoice makes r an invoice of record off of input partition part.
func (r *cellRec) invoice(part, off int) {
	r.bits = r.bits&^(7<<cellKindAt|maxSrcPart) | uint32(cellInvoice)<<cellKindAt | uint32(part)
	r.srcOff = int32(off)
}

func (r *cellRec) setKind(k cellKind) { r.bits = r.bits&^(7<<cellKindAt) | uint32(k)<<cellKindAt }

type cellKind uint8

const (
	cellUpstream cellKind = iota // Value is this cell's own record name
	cellInvoice                  // Value inv(Source), Source an input record
	cellCommit                   // a COMMIT marker (Value and Control "COMMIT")
	cellAbort                    // an ABORT marker
	cellOther                    // any other strings, kept in others
)

// otherCell holds the strings of a cell that fits no compact shape.
type otherCell struct {
	Value, Source, Control string
}

// Len is the number of cells.
func (c *CellLog) Len() int {
	if c.st != nil && c.st.open {
		return c.n + c.openCount()
	}
	return c.n
}

// At returns cell i, which must not lie below Start.
func (c *CellLog) At(i int) Cell {
	if i < int(c.startOff) {
		c.forgotten(i)
	}
	if !c.inRecs {
		return Cell{Offset: i, Value: c.names.Name(c.tp, i), PID: -1, Seq: -1, Tick: int(c.tickOf(i))}
	}
	k, j, ri, in := c.locate(i)
	if in {
		return c.spanCell(i, j, c.spans.At(k))
	}
	return c.cell(i, ri, c.recs.At(ri))
}

// TickAt is the tick cell i was appended at, without spelling the cell
// (the backlog preloaded at the world's start: tick 0).
func (c *CellLog) TickAt(i int) int {
	if !c.inRecs {
		return int(c.tickOf(i))
	}
	k, _, ri, in := c.locate(i)
	if in {
		return int(c.spans.At(k).tick)
	}
	return int(c.recTick(ri, c.recs.At(ri)))
}

// IsData reports whether cell i is a data record (not a marker), without
// spelling its value.
func (c *CellLog) IsData(i int) bool {
	if !c.inRecs {
		return true
	}
	_, _, ri, in := c.locate(i)
	if in {
		return true
	}
	r := c.recs.At(ri)
	switch r.kind() {
	case cellCommit, cellAbort:
		return false
	case cellOther:
		return c.others.At(int(r.srcOff)).Control == ""
	}
	return true
}

// PlainRun is how many cells from offset i on (at most max) are plain
// records of the upstream producer (named, no producer id, not
// transactional, data): all of them up to the log's end while the log
// keeps only such records (its tick runs), none once it keeps cells one
// by one (then a reader takes them one at a time). It never reads a cell.
func (c *CellLog) PlainRun(i, max int) int {
	return c.plainRun(i, max, c.Len()) // the log's end as Len reads it (not c.n: a log may count records past its stored cells)
}

// plainRun is PlainRun for a log whose Len is n.
func (c *CellLog) plainRun(i, max, n int) int {
	if c.inRecs || i < 0 || i >= n {
		return 0
	}
	return min(n-i, max)
}

// named reports whether cell i's value is its own record name (an
// upstream record: World.RecordName spells it), without spelling it.
func (c *CellLog) named(i int) bool {
	if !c.inRecs {
		return true
	}
	_, _, ri, in := c.locate(i)
	return !in && c.recs.At(ri).kind() == cellUpstream
}

// Txn is cell i's transactional state, without spelling its value.
func (c *CellLog) Txn(i int) TxnMark {
	if !c.inRecs {
		return NotTransactional
	}
	k, _, ri, in := c.locate(i)
	if in {
		s := c.spans.At(k)
		return s.txn()
	}
	return c.recs.At(ri).txn()
}

// SourceRef is cell i's source as a reference to an input record: its
// partition's number among the input partitions and its offset, without
// spelling it. ok is false when the cell's source is not an input record's
// name (none, for a record of the upstream producer or a marker).
func (c *CellLog) SourceRef(i int) (part, off int, ok bool) {
	if !c.inRecs {
		return 0, 0, false
	}
	k, j, ri, in := c.locate(i)
	if in {
		s := c.spans.At(k)
		part, off := c.spanSource(&s, j)
		return part, off, true
	}
	r := c.recs.At(ri)
	switch r.kind() {
	case cellInvoice:
		return r.srcPart(), int(r.srcOff), true
	case cellOther:
		return c.names.Ref(c.others.At(int(r.srcOff)).Source)
	}
	return 0, 0, false
}

// CellSource is what Sources tells of a data cell: its offset, its source
// as SourceRef gives it (Part, Off, OK) and its transaction state.
type CellSource struct {
	I, Part, Off int
	OK           bool
	Txn          TxnMark
}

// Sources ranges over the data cells below offset n (markers left out),
// oldest first, each with what SourceRef and Txn give for it: a span's
// sources enumerated once for the span (its records by the partitioner
// in one pass, not a scan from its first record for each cell), the cells
// between spans read by index.
func (c *CellLog) Sources(n int) iter.Seq[CellSource] {
	return func(yield func(CellSource) bool) {
		n = min(n, c.Len())
		if !c.inRecs {
			for i := int(c.startOff); i < n; i++ { // upstream records: no source, never transactional
				if !yield(CellSource{I: i, Txn: NotTransactional}) {
					return
				}
			}
			return
		}
		cells := func(from, to, before int) bool { // cells from..to-1, none in a span, before of them in spans before
			for i := from; i < to; i++ {
				if cs, ok := c.recSource(i, i-before); ok && !yield(cs) {
					return false
				}
			}
			return true
		}
		i := int(c.startOff)
		k, before := c.spanFrom(i)
		for ; c.spans != nil && k < c.spans.Len() && i < n; k++ {
			s := c.spans.At(k)
			if !cells(i, min(int(s.first), n), before) {
				return
			}
			first := int(s.first)
			for j, src := range c.spanSources(&s) {
				if first+j >= n || !yield(CellSource{I: first + j, Part: src[0], Off: src[1], OK: true, Txn: s.txn()}) {
					break
				}
			}
			i, before = first+int(s.n), int(s.before)+int(s.n)
		}
		cells(i, n, before)
	}
}

// recSource is cell i, at index ri of recs, as Sources tells it; false
// for a marker.
func (c *CellLog) recSource(i, ri int) (CellSource, bool) {
	r := c.recs.At(ri)
	cs := CellSource{I: i, Txn: r.txn()}
	switch r.kind() {
	case cellCommit, cellAbort:
		return cs, false
	case cellInvoice:
		cs.Part, cs.Off, cs.OK = r.srcPart(), int(r.srcOff), true
	case cellOther:
		o := c.others.At(int(r.srcOff))
		if o.Control != "" {
			return cs, false
		}
		cs.Part, cs.Off, cs.OK = c.names.Ref(o.Source)
	}
	return cs, true
}

// All ranges over the cells with their offsets, oldest first.
func (c *CellLog) All() iter.Seq2[int, Cell] { return c.From(0) }

// From ranges over the cells from offset i on (from Start, when i is
// below it).
func (c *CellLog) From(i int) iter.Seq2[int, Cell] {
	return store.RangeFrom(max(i, int(c.startOff)), c.Len(), c.At)
}

// Slice copies cells [from, to) into a new slice.
func (c *CellLog) Slice(from, to int) []Cell { return store.SliceOf(from, to, c.At) }

// cell is cell i, at index ri of recs, whose record is r.
func (c *CellLog) cell(i, ri int, r cellRec) Cell {
	wr, seq := c.writerOf(i, r)
	out := Cell{Offset: i, PID: wr.pid, Epoch: int(wr.epoch), Seq: int(seq), Txn: r.txn(), Tick: int(c.recTick(ri, r))}
	if wr.producer > 0 {
		out.Producer = c.producers[wr.producer-1]
	}
	switch r.kind() {
	case cellUpstream:
		out.Value = c.names.Name(c.tp, i)
	case cellInvoice:
		var buf [80]byte
		b := append(buf[:0], "inv("...)
		at := len(b)
		b = c.names.AppendName(b, c.names.Input().At(r.srcPart()), int(r.srcOff))
		b = append(b, ')')
		out.Value = string(b)
		out.Source = out.Value[at : len(out.Value)-1] // shares Value's bytes
	case cellCommit:
		out.Value, out.Control = "COMMIT", "COMMIT"
	case cellAbort:
		out.Value, out.Control = "ABORT", "ABORT"
	case cellOther:
		o := c.others.At(int(r.srcOff))
		out.Value, out.Source, out.Control = o.Value, o.Source, o.Control
	}
	return out
}

// addRec appends cell record r (its tick not set yet), written at tick.
func (c *CellLog) addRec(r cellRec, tick int32) {
	if c.recs.StartsChunk() {
		c.base = tick
		c.bases.Append(tick)
	}
	t, ok := store.Narrow(int64(tick), int64(c.base), farTick)
	if !ok {
		t = farTick
		c.farTicks.Append(tickRun{first: int32(c.recs.Len()), tick: tick})
	}
	r.seqTick = r.seqTick&(1<<24-1) | uint32(t)<<24
	c.recs.Append(r)
}

// recTick is the tick of the cell at index ri of recs, whose record is r.
func (c *CellLog) recTick(ri int, r cellRec) int32 {
	if t := r.tick(); t != farTick {
		return c.bases.At(store.ChunkOf(ri)) + int32(t)
	}
	f, _ := store.FarAt(&c.farTicks, ri, func(f tickRun) int32 { return f.first })
	return f.tick
}

// tickOf finds the tick of upstream record i in runs.
func (c *CellLog) tickOf(i int) int32 {
	n := c.runs.Len()
	var r tickRun
	if last := c.runs.Last(); last != nil && int(last.first) <= i {
		r = *last
	} else {
		r = c.runs.At(sort.Search(n, func(k int) bool { return int(c.runs.At(k).first) > i }) - 1)
	}
	if r.tick >= 0 {
		return r.tick
	}
	return c.st.segs[-1-r.tick].tickOf(int(r.first), i)
}

// AppendUpstream adds n records of the upstream producer at tick (an input
// partition's records: no producer id, values their own names).
func (c *CellLog) appendUpstream(n, tick int) {
	if n <= 0 {
		return
	}
	if seg, sent, ok := c.closeSeg(); ok {
		// The steady producer goes on after these records, where it was.
		defer c.openSeg(seg.rate, int(seg.since), sent)
	}
	if c.inRecs {
		r := c.rec(cellWriter{pid: -1}, -1, NotTransactional) // the same for each: one writer, found once
		for ; n > 0; n-- {
			c.addRec(r, store.Int32Of(tick, "tick"))
			c.n++
		}
		return
	}
	t := store.Int32Of(tick, "tick")
	if last := c.runs.Last(); last == nil || last.tick != t {
		c.runs.Append(tickRun{first: store.Int32Of(c.n, "input offset"), tick: t})
	}
	c.n += n
	store.Int32Of(c.n, "input offset")
}

// append adds cell v (its Offset is not read) at offset Len().
func (c *CellLog) append(v Cell) {
	if !c.inRecs && v.Control == "" && v.Source == "" && v.Producer == "" && v.PID == -1 && v.Seq == -1 &&
		v.Epoch == 0 && v.Txn == NotTransactional && c.names.IsName(v.Value, c.tp, c.Len()) {
		c.appendUpstream(1, v.Tick)
		return
	}
	c.toRecs()
	r := c.cellRecOf(v)
	switch {
	case v.Control == "" && v.Source == "" && c.names.IsName(v.Value, c.tp, c.n):
		r.setKind(cellUpstream)
	case v.Control == "COMMIT" && v.Value == "COMMIT" && v.Source == "":
		r.setKind(cellCommit)
	case v.Control == "ABORT" && v.Value == "ABORT" && v.Source == "":
		r.setKind(cellAbort)
	case v.Control == "" && isInvoiceOf(v.Value, v.Source):
		if part, off, ok := c.names.Ref(v.Source); ok && part <= maxSrcPart {
			r.invoice(part, off)
			break
		}
		fallthrough
	default:
		r.setKind(cellOther)
		r.srcOff = store.Int32Of(c.others.Len(), "odd cells")
		c.others.Append(otherCell{Value: v.Value, Source: v.Source, Control: v.Control})
	}
	c.addRec(r, store.Int32Of(v.Tick, "tick"))
	c.n++
}

// cellRecOf is v's fields that every kind of cell keeps but its tick
// (addRec), for the cell about to be appended at offset c.n.
func (c *CellLog) cellRecOf(v Cell) cellRec {
	return c.rec(cellWriter{pid: v.PID, epoch: store.Int32Of(v.Epoch, "producer epoch"), producer: c.producerID(v.Producer)},
		store.Int32Of(v.Seq, "producer sequence"), v.Txn)
}

// rec is the record (kind cellUpstream, its tick not set) of the cell
// about to be appended at offset c.n, written by wr with sequence number
// seq: wr's index in writers, one of the last eight, else added (a writer
// seen long ago may be added again: an index is only a value's place, and
// the scan stays short however many producers ever wrote); farWriter, and
// wr and seq kept in far, past 4,094 writers or for a sequence number
// that does not fit.
func (c *CellLog) rec(wr cellWriter, seq int32, txn TxnMark) cellRec {
	r := cellRec{bits: uint32(txn) << cellTxnAt}
	if seq >= -1 && seq <= maxCellSeq {
		// (a span may have added writers past maxWriters: a cellRec
		// keeps only the indices below it)
		last := min(len(c.writers), maxWriters)
		for i := last - 1; i >= max(last-8, 0); i-- {
			if c.writers[i] == wr {
				r.bits |= uint32(i) << cellWriteAt
				r.seqTick = uint32(seq + 1)
				return r
			}
		}
		if len(c.writers) < maxWriters {
			r.bits |= uint32(len(c.writers)) << cellWriteAt
			r.seqTick = uint32(seq + 1)
			c.writers = append(c.writers, wr)
			return r
		}
	}
	c.far.Append(farCell{off: int32(c.n), seq: seq, w: wr})
	r.bits |= farWriter << cellWriteAt
	return r
}

// writerOf is the writer and the sequence number of cell i, whose record
// is r.
func (c *CellLog) writerOf(i int, r cellRec) (cellWriter, int32) {
	if w := r.writer(); w != farWriter {
		return c.writers[w], r.seq()
	}
	f, _ := store.FarAt(&c.far, i, func(f farCell) int32 { return f.off })
	return f.w, f.seq
}

// appendInvoice is append for an invoice whose Value and Source (v's are
// not read) are inv(x) and x, x the name of record srcOff of input
// partition src: the cell append would keep, without spelling x and
// reading it back. slot is a hint: src's number among the input
// partitions (topo.InputIndex.slot), checked before use; -1 to look it up.
func (c *CellLog) appendInvoice(v Cell, src wire.TopicPartition, srcOff, slot int) {
	part, ok := c.names.Input().SlotCached(src, int32(slot), nil)
	if !ok || part > maxSrcPart || srcOff < 0 || srcOff > topo.MaxRefOffset {
		v.Source = c.names.Name(src, srcOff)
		v.Value = "inv(" + v.Source + ")"
		c.append(v)
		return
	}
	c.toRecs()
	r := c.cellRecOf(v)
	r.invoice(part, srcOff)
	c.addRec(r, store.Int32Of(v.Tick, "tick"))
	c.n++
}

// isInvoiceOf reports whether value is "inv(" + source + ")".
func isInvoiceOf(value, source string) bool {
	return len(value) == len(source)+5 && value[:4] == "inv(" && value[4:len(value)-1] == source && value[len(value)-1] == ')'
}

// toRecs moves the upstream runs to one cellRec per cell, once, when the
// first cell of another shape arrives.
func (c *CellLog) toRecs() {
	if c.inRecs {
		return
	}
	if c.st != nil && c.st.open {
		panic("sim: a cell other than an upstream record appended to " + c.tp.String() + ", which has steady production")
	}
	c.inRecs = true
	if c.runs.Len() == 0 {
		return
	}
	// Every record of the runs has the upstream producer's writer, which
	// writers lists first: found once (it fits, as writers is empty).
	r := c.rec(cellWriter{pid: -1}, -1, NotTransactional)
	for k := 0; k < c.runs.Len(); k++ {
		run, end := c.runs.At(k), c.n
		if k+1 < c.runs.Len() {
			end = int(c.runs.At(k + 1).first)
		}
		for i := int(run.first); i < end; i++ {
			t := run.tick
			if t < 0 {
				t = c.st.segs[-1-t].tickOf(int(run.first), i)
			}
			c.addRec(r, t)
		}
	}
	c.runs = store.Seq[tickRun]{}
	if c.st != nil {
		c.st.segs = nil
	}
}

// producerID is the index of a producer's name plus one, added if new.
func (c *CellLog) producerID(name string) uint16 {
	if name == "" {
		return 0
	}
	if len(c.producers) <= producerScan {
		for i := len(c.producers) - 1; i >= 0; i-- {
			if c.producers[i] == name {
				return uint16(i + 1)
			}
		}
	} else {
		if len(c.producerIdx) != len(c.producers) {
			c.producerIdx = make(map[string]uint16, 2*len(c.producers))
			for i, p := range c.producers {
				c.producerIdx[p] = uint16(i + 1)
			}
		}
		if id, ok := c.producerIdx[name]; ok {
			return id
		}
	}
	if len(c.producers) >= 0xffff {
		panic("sim: more than 65,535 producers wrote to " + c.tp.String() + " (kernel/worldcost.go caps a world at 65,535 clients)")
	}
	c.producers = append(c.producers, name)
	if c.producerIdx != nil {
		c.producerIdx[name] = uint16(len(c.producers))
	}
	return uint16(len(c.producers))
}

// producerScan is the most producer names producerID scans.
const producerScan = 16

// markTxn gives every open cell of pid from offset first on the mark (the
// transaction's marker), copying shared chunks first.
func (c *CellLog) markTxn(first int, pid int64, mark TxnMark) {
	if !c.inRecs {
		return // upstream records are never transactional
	}
	// The writers with that producer id (a few), then the cells.
	var buf [64]bool
	of := buf[:0]
	for _, wr := range c.writers {
		of = append(of, wr.pid == pid)
	}
	from := first
	if k, _, ri, in := c.locate(first); in {
		s := c.spans.At(k)
		from = int(s.first) - int(s.before)
	} else {
		from = ri
	}
	c.recs.Update(from, c.recs.Len(), func(r *cellRec) bool { return r.writer() != farWriter && of[r.writer()] && r.txn() == TxnOpen },
		func(r *cellRec) { r.setTxn(mark) })
	for k := c.far.First(); k < c.far.Len(); k++ {
		f := c.far.At(k)
		if i := int(f.off); i >= first && i < c.n && f.w.pid == pid {
			if _, _, ri, in := c.locate(i); !in {
				if r := c.recs.At(ri); r.txn() == TxnOpen {
					r.setTxn(mark)
					c.recs.Set(ri, r)
				}
			}
		}
	}
	if c.spans == nil {
		return
	}
	c.spans.Update(0, c.spans.Len(), func(s *cellSpan) bool {
		return int(s.first)+int(s.n) > first && c.spanWriter(s).pid == pid && s.txn() == TxnOpen
	}, func(s *cellSpan) { s.setTxn(mark) })
}

func (c *CellLog) clone() CellLog {
	n := *c
	n.runs, n.recs, n.others = c.runs.Clone(), c.recs.Clone(), c.others.Clone()
	n.bases, n.farTicks = c.bases.Clone(), c.farTicks.Clone()
	n.producers = c.producers[:len(c.producers):len(c.producers)]
	n.producerIdx = nil
	n.writers = c.writers[:len(c.writers):len(c.writers)]
	n.far = c.far.Clone()
	if c.spans != nil {
		// The writers' index is this log's own: a clone starts without.
		n.spans = &spanStore{Seq: c.spans.Seq.Clone(), runs: c.spans.runs.Clone()}
	}
	return n
}
