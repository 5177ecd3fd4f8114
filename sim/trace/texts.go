package trace

import "github.com/kgrepl/kgrepl/sim/wire"

// Reading a trace's texts back: a packet's summary, an event's text and
// the records it names, formatted when a view asks.

// packetText is a packet's summary: the text at ref, except that a
// Produce answer whose record was written keeps no text of its own but its
// produced event's (handleProduce), read as tplProduceAck, which takes the
// same arguments.
func (t *Trace) packetText(api wire.API, response bool, ref textRef) string {
	if api == wire.Produce && response {
		b := t.texts.bytes(ref)
		if k, ok := ackTemplate[firstByte(b)]; ok {
			r := textReader{t: t, b: b[1:]}
			var buf [64]byte
			out, _, _ := r.template(buf[:0], templates[k], 0)
			return string(out)
		}
	}
	return t.text(ref)
}

// invoiceSource is the source of the invoice at offset off of the log
// numbered i (topo.Layout.Number), an input record; false for any other
// cell (or with no logs to read).
func (t *Trace) invoiceSource(i, off uint64) (wire.TopicPartition, int, bool) {
	if t.sources == nil {
		return wire.TopicPartition{}, 0, false
	}
	return t.sources.InvoiceSource(i, off)
}

// appendText formats the text at ref; member is its event's (for %m).
func (t *Trace) appendText(out []byte, ref textRef, member string) []byte {
	r := t.readerAt(ref, member)
	for ok := true; ok; {
		out, _, ok = r.next(out)
	}
	return out
}

func (t *Trace) text(ref textRef) string { return t.memberText(ref, "") }

// memberText is the text at ref of an event whose member is member.
func (t *Trace) memberText(ref textRef, member string) string {
	if ref == 0 {
		return ""
	}
	var buf [128]byte
	return string(t.appendText(buf[:0], ref, member))
}

// eventRecords is an event's Records: the record tokens of its text at ref
// from byte at on, or a tplProcessed text's record.
func (t *Trace) eventRecords(ref textRef, at uint16) []string {
	b := t.texts.bytes(ref)
	if at > 0 && int(at) <= len(b) {
		return t.names(b[at:])
	}
	if firstByte(b) != tWhole+tplProcessed {
		return nil
	}
	r := textReader{t: t, b: b[1:]}
	tp, ok := r.tp()
	off, ok2 := r.uvarint()
	if !ok || !ok2 || off > 1<<62 {
		return nil
	}
	return []string{t.layout.Name(tp, int(off))}
}

// names formats a list of records (an event's Records): one name per
// token, the spaces between them (phSpace) skipped.
func (t *Trace) names(b []byte) []string {
	var out []string
	r := textReader{t: t, b: b}
	var buf [64]byte
	for {
		if len(r.b) > 0 && r.b[0] == tRecords { // a run: one name per record
			r.b = r.b[1:]
			tp, off, n, ok := r.recordRun()
			if !ok {
				return out
			}
			for i := 0; i < n; i++ {
				out = append(out, string(t.appendRecordName(buf[:0], tp, off+i)))
			}
			continue
		}
		b, tok, ok := r.next(buf[:0])
		if !ok {
			return out
		}
		if tok != phSpace {
			out = append(out, string(b))
		}
	}
}

// appendRecordName is RecordName appending to b.
func (t *Trace) appendRecordName(b []byte, tp wire.TopicPartition, off int) []byte {
	return t.layout.AppendName(b, tp, off)
}
