package draw

import "github.com/kgrepl/kgrepl/sim"

// InvoiceNumbersFrom exposes invoiceNumbersFrom to the package's tests.
var InvoiceNumbersFrom = invoiceNumbersFrom

// Keeps exposes SeqOptions.keeps (with its --type set) to the tests.
func (opt SeqOptions) Keeps(p *sim.Packet) bool { return opt.keeps(p, opt.types()) }

// SeqRows is what buildSeq draws of opt's range: each row's tick and
// whether it is a message (else a note), whether more are left out, and
// the messages counted.
func SeqRows(w *sim.World, opt SeqOptions) (ticks []int, msg []bool, more bool, msgs int) {
	m := buildSeq(w, opt)
	for _, r := range m.rows {
		ticks, msg = append(ticks, r.tick), append(msg, r.pkt != nil)
	}
	return ticks, msg, m.more, m.msgs
}

// SeqRowsByScan is SeqRows read by scanning the whole trace: every message
// and note of the range on the lanes drawn, merged by tick (a tick's
// notes before its messages), the first MaxSeqRows of them; more when
// there are others.
func SeqRowsByScan(w *sim.World, opt SeqOptions) (ticks []int, msg []bool, more bool, msgs int) {
	want := opt.types()
	clients, allLanes := seqLanes(w, opt, want)
	inLane := map[string]bool{sim.Broker: true}
	for _, c := range clients {
		inLane[c] = true
	}
	cut := len(clients)+1 < allLanes
	var pk, ev []int // ticks
	for _, p := range w.Packets.Headers(0) {
		if opt.keeps(&p, want) {
			msgs++
			if !cut || inLane[p.From] && inLane[p.To] {
				pk = append(pk, p.Sent)
			}
		}
	}
	for _, h := range w.Events.Headers(0) {
		if noteKinds[h.Kind] && h.Tick >= opt.From && (opt.To < 0 || h.Tick <= opt.To) && (opt.Member == "" || h.Member == opt.Member) && (!cut || inLane[noteLane(&h)]) {
			ev = append(ev, h.Tick)
		}
	}
	i, j := 0, 0
	for (i < len(ev) || j < len(pk)) && len(ticks) < MaxSeqRows {
		if j >= len(pk) || i < len(ev) && ev[i] <= pk[j] {
			ticks, msg = append(ticks, ev[i]), append(msg, false)
			i++
			continue
		}
		ticks, msg = append(ticks, pk[j]), append(msg, true)
		j++
	}
	return ticks, msg, len(ev)+len(pk) > len(ticks), msgs
}
