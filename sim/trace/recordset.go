package trace

import (
	"encoding/binary"
	"iter"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Records as runs. A fetch answer, a poll's batch and a processed event
// name the input records they are about; steady traffic makes a batch of
// hundreds of records of one partition, and a tick's work on it one
// processed event. So a run of records that follow each other in one input
// partition is one token, and how it reads depends on its length:
//
//   - up to spellRunMax records, each spelled (o0.3 o0.4 o0.5), as kgrepl
//     has always printed them: the page's world (max.poll.records 3) and
//     every world whose runs are that short read as they did;
//   - more than spellRunMax, as a range, its first and last record:
//     o0.3..o0.502 (tRange).
//
// An event's Records (Event.Records) read the same tokens without spelling
// them: a reader asks whether an event covers a record (Has), or walks its
// runs (Runs) or names (All).

// spellRunMax is the longest run of records a text spells record by record;
// a longer one reads as a range, o0.3..o0.502. (README's real-time paragraph
// and docs/reference.md's "Steady production and processing time" state
// it.)
const spellRunMax = 16

// encRun appends n records (n >= 1) of input partition i (tpIndex) from
// offset off: one tRecord, tRecords tokens (spaced) up to spellRunMax, a
// tRange past it.
func encRun(b []byte, i, off, n int) []byte {
	switch {
	case n == 1:
		return encRecordAt(b, i, off)
	case n > spellRunMax:
		b = binary.AppendUvarint(append(b, tRange), uint64(i))
		b = appendUvarint(b, uint64(off)) // an offset: a few bytes
		return binary.AppendUvarint(b, uint64(n))
	}
	for k := 0; k < n; k += maxRun {
		if k > 0 {
			b = append(b, phSpace)
		}
		b = binary.AppendUvarint(append(b, tRecords), uint64(i))
		b = appendUvarint(b, uint64(off+k)) // an offset: a few bytes
		b = binary.AppendUvarint(b, uint64(min(n-k, maxRun)))
	}
	return b
}

// appendRun spells n records of tp from offset off as encRun's tokens
// read: each record, spaced, up to spellRunMax; first..last past it.
func appendRun(out []byte, l *topo.Layout, tp wire.TopicPartition, off, n int) []byte {
	if n > spellRunMax {
		out = append(l.AppendName(out, tp, off), ".."...)
		return l.AppendName(out, tp, off+n-1)
	}
	for k := 0; k < n; k++ {
		if k > 0 {
			out = append(out, ' ')
		}
		out = l.AppendName(out, tp, off+k)
	}
	return out
}

// rangeRun reads a tRange token's arguments, as recordRun does.
func (r *textReader) rangeRun() (wire.TopicPartition, int, int, int, bool) {
	tp, part, ok := r.tpNumbered()
	off, ok2 := r.uvarint()
	n, ok3 := r.uvarint()
	if !ok || !ok2 || !ok3 || off > 1<<62 || n > 1<<62 || n == 0 {
		return wire.TopicPartition{}, 0, 0, 0, false
	}
	return tp, int(off), int(n), part, true
}

// rangeText reads a tRange token: o0.3..o0.502.
func (r *textReader) rangeText(out []byte) ([]byte, bool) {
	tp, off, n, _, ok := r.rangeRun()
	if !ok {
		return out, false
	}
	out = append(r.tx.layout.AppendName(out, tp, off), ".."...)
	return r.tx.layout.AppendName(out, tp, off+n-1), true
}

// RecordRun is a run of an event's records: Count records of input
// partition TP from offset First on (Part its index among the input
// partitions), or, when Name is set, one record that is not an input
// record's name, spelled as it is (Count 1, Part -1).
type RecordRun struct {
	TP           wire.TopicPartition
	Part         int
	First, Count int
	Name         string
}

// Records are the input records an event is about (polled, processed):
// read from the event's own text when asked, so that an event of a million
// records holds and spells none of their names. The zero value is no
// record.
type Records struct {
	tx  *texts
	b   []byte // the record tokens, or (one) a tplProcessed or tplProcessedRun text's arguments
	one bool
	run bool // one, of tplProcessedRun: its arguments end with the count
}

// Runs ranges over the records' runs, in the event's order.
func (rs Records) Runs() iter.Seq[RecordRun] {
	return func(yield func(RecordRun) bool) { rs.EachRun(yield) }
}

// EachRun calls yield with each of the records' runs, in the event's
// order, until it returns false: Runs for a reader that walks the runs of
// every event of a busy tick (the session's quiet summary, kernel/quiet.go)
// with one yield it keeps, where a range over Runs makes a closure for
// each event, on the heap.
func (rs Records) EachRun(yield func(RecordRun) bool) {
	if rs.tx == nil {
		return
	}
	r := textReader{tx: rs.tx, b: rs.b}
	if rs.one {
		run, ok := r.inputRun(1)
		if rs.run && ok {
			var n uint64
			n, ok = r.uvarint()
			ok = ok && n > 0 && n <= 1<<62
			run.Count = int(n)
		}
		if ok {
			yield(run)
		}
		return
	}
	for len(r.b) > 0 {
		tok := r.b[0]
		r.b = r.b[1:]
		var run RecordRun
		ok := true
		switch tok {
		case phSpace:
			continue
		case tListOf: // the records are the text it refers to
			if r, ok = r.listRef(); !ok {
				return
			}
			continue
		case tRecord:
			run, ok = r.inputRun(1)
		case tRecords, tRange:
			read := r.recordRun
			if tok == tRange {
				read = r.rangeRun
			}
			tp, off, n, part, k := read()
			run, ok = RecordRun{TP: tp, Part: part, First: off, Count: n}, k
		case tLit:
			var name []byte
			name, ok = r.lit(nil)
			run = RecordRun{Part: -1, Count: 1, Name: string(name)}
		case tRecordSeq:
			more := true
			ok = r.recordSeq(func(tp wire.TopicPartition, part, off int) {
				more = more && yield(RecordRun{TP: tp, Part: part, First: off, Count: 1})
			}, func() {})
			if !ok || !more {
				return
			}
			continue
		default:
			return
		}
		if !ok || !yield(run) {
			return
		}
	}
}

// inputRun reads a partition number and an offset: n records from it.
func (r *textReader) inputRun(n int) (RecordRun, bool) {
	i, ok := r.uvarint()
	off, ok2 := r.uvarint()
	if !ok || !ok2 || off > 1<<62 {
		return RecordRun{}, false
	}
	tp, _, ok := r.tx.layout.Numbered(i)
	return RecordRun{TP: tp, Part: int(i), First: int(off), Count: n}, ok
}

// Len counts the records.
func (rs Records) Len() int {
	n := 0
	for run := range rs.Runs() {
		n += run.Count
	}
	return n
}

// Has reports whether name is one of the records (an input record's name
// is found by its partition and offset, in the runs: nothing is spelled).
func (rs Records) Has(name string) bool {
	part, off, input := -1, 0, false
	if rs.tx != nil {
		part, off, input = rs.tx.layout.Ref(name)
	}
	for run := range rs.Runs() {
		switch {
		case run.Name != "":
			if run.Name == name {
				return true
			}
		case input && run.Part == part && off >= run.First && off < run.First+run.Count:
			return true
		}
	}
	return false
}

// All ranges over the records' names, in order, one at a time.
func (rs Records) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		for run := range rs.Runs() {
			if run.Name != "" {
				if !yield(run.Name) {
					return
				}
				continue
			}
			for k := 0; k < run.Count; k++ {
				if !yield(rs.tx.layout.Name(run.TP, run.First+k)) {
					return
				}
			}
		}
	}
}

// Names lists the records' names (a view of a few records, a test): one
// string per record, so not for a run of millions.
func (rs Records) Names() []string {
	var out []string
	for n := range rs.All() {
		out = append(out, n)
	}
	return out
}

// String spells the records as the event's text does: runs up to
// spellRunMax records name each record, longer ones read first..last.
func (rs Records) String() string {
	var out []byte
	for run := range rs.Runs() {
		if len(out) > 0 {
			out = append(out, ' ')
		}
		switch {
		case run.Name != "":
			out = append(out, run.Name...)
		default:
			out = appendRun(out, rs.tx.layout, run.TP, run.First, run.Count)
		}
	}
	return string(out)
}

// SpellRunMax is the longest run a text spells record by record
// (spellRunMax): a longer one reads first..last. Exported for the tests of
// other packages (sim's TestRunsAgreeWithPerRecord).
const SpellRunMax = spellRunMax
