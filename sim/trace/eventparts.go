package trace

// Parts of an event read without the rest of it: the session's quiet
// summary (kernel/quiet.go) takes every Polled and Processed event of a
// run into its counts, and needs of each only its label and its records.
// Formatting their texts, which name every record, was most of what a
// quiet run of steady traffic cost beside its steps.

// RoutineAt is event i's header (Header) with its Records, as At(i)
// reads them, and the label its text begins with, Label.String (C2, or C2
// (process 1) for a client's older process), read without the rest of
// the text: all the session's quiet summary takes of a poll or a
// processing, read with one look at the event's record. ok is false when
// the text does not begin with a label. The texts of Polled and Processed
// events begin with their label (Trace.Polled, texts.encProcessed), but
// for a newest process's records processed, which are the whole
// tplProcessed or tplProcessedRun template ("%m processed ..."), whose
// label is the event's member.
func (l *EventLog) RoutineAt(i int) (e Event, label string, ok bool) {
	f, r := l.recs.whole(i)
	e = l.event(f, r)
	e.Records = l.t.eventRecords(f.text, f.records)
	label, ok = l.labelOf(f, e.Member)
	return e, label, ok
}

// labelOf is RoutineAt's label of the event whose fields are f, member
// its member.
func (l *EventLog) labelOf(f farEvent, member string) (string, bool) {
	r := l.t.readerAt(f.text, member)
	switch firstByte(r.b) {
	case tWhole + tplProcessed, tTemplate + tplProcessed, tWhole + tplProcessedRun, tTemplate + tplProcessedRun:
		return member, member != ""
	case tParty: // a client's newest process: its client id (texts.encParty)
		r.b = r.b[1:]
		i, ok := r.uvarint()
		if !ok || i >= uint64(len(r.tx.parties.names)) {
			return "", false
		}
		return r.tx.parties.names[i].name, true
	case tLit: // an older process: C2 (process 1)
		r.b = r.b[1:]
		out, ok := r.lit(nil)
		return string(out), ok
	}
	return "", false
}
