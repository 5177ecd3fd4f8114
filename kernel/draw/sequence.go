package draw

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/digits"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/kernel/wallclock"
	"github.com/kgrepl/kgrepl/sim"
)

// SeqOptions choose what a sequence diagram shows.
type SeqOptions struct {
	From, To int       // ticks, inclusive; To < 0 means up to now
	Types    []sim.API // message types to keep; none keeps every type
	Member   string    // keep only messages to or from this client ("" = all)
	Branch   string    // named in the title when not "" or "main"
	Title    string    // replaces the title when not ""
}

// noteKinds are the events drawn as notes between the messages: what the
// protocol decided, not the per-record work (that is in the messages).
var noteKinds = map[sim.EventKind]bool{
	sim.EvGroupState: true, sim.EvGeneration: true, sim.EvAssigned: true, sim.EvRevoked: true,
	sim.EvRemoved: true, sim.EvPollTimeout: true, sim.EvCrash: true, sim.EvSlowStart: true,
	sim.EvCommitFailed: true, sim.EvClosed: true, sim.EvStarted: true, sim.EvStaticRejoin: true,
	sim.EvTxnState: true, sim.EvFenced: true, sim.EvZombie: true, sim.EvUnstableOffset: true,
	sim.EvRetry: true, sim.EvProducer: true, sim.EvDeploy: true,
}

// seqRow is one row of a sequence diagram: a message or a note.
type seqRow struct {
	tick int
	pkt  *sim.Packet
	ev   *sim.Event
}

// seqModel is what both renderings (SVG and Mermaid) draw.
type seqModel struct {
	lanes    []string
	allLanes int // B1 and every client: more than the lanes when some are left out
	rows     []seqRow
	msgs     int  // the messages of the range, drawn or not
	more     bool // rows of the range follow the rows (MaxSeqRows)
	title    string
	clock    wallclock.Clock
}

// cutLine says what a diagram of its first n rows leaves out ("" when
// nothing): the messages after them (and where the rest starts), those of
// lanes not drawn, and the lanes.
func (m *seqModel) cutLine(n int) string {
	drawn := 0
	for _, r := range m.rows[:n] {
		if r.pkt != nil {
			drawn++
		}
	}
	var parts []string
	if drawn < m.msgs {
		t := fmt.Sprintf("%s of %s messages drawn", digits.Int(drawn), digits.Int(m.msgs))
		if n > 0 && (n < len(m.rows) || m.more) {
			t += fmt.Sprintf(", to tick %d (--ticks %d.. draws on)", m.rows[n-1].tick, m.rows[n-1].tick+1)
		}
		parts = append(parts, t)
	}
	if clients := len(m.lanes) - 1; clients+1 < m.allLanes && drawn < m.msgs {
		parts = append(parts, fmt.Sprintf("lanes of %d of %s members (the first the range names)", clients, digits.Int(m.allLanes-1)))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "; --ticks, --type or --member narrows"
}

// A sequence diagram of a big world draws part of its range: at most
// MaxSeqRows rows (messages and notes), the first of the range, and at most
// MaxSeqLanes lanes (B1 and the clients that send or receive first), the
// rows and lanes left out counted on a line where the diagram stops. The
// page's diagrams draw whole (the longest, demo 15's whole history, is
// 496 messages and their notes on 5 lanes; 12 members draw 13 lanes).
const (
	MaxSeqRows  = 1000
	MaxSeqLanes = 21
	// seqMaxBodyH bounds the rows' height (labels wrap), and seqMaxPixels
	// the picture's pixels: a picture of any lanes stays within a PNG's
	// pixels (50,000,000) and a PDF page's side (19,200).
	seqMaxBodyH  = 18000.0
	seqMaxPixels = 48_000_000.0
)

// keeps says whether a message passes opt's filters.
func (opt SeqOptions) keeps(p *sim.Packet, want map[sim.API]bool) bool {
	if p.Sent < opt.From || (opt.To >= 0 && p.Sent > opt.To) {
		return false
	}
	if len(want) > 0 && !want[p.Type] {
		return false
	}
	return opt.Member == "" || p.From == opt.Member || p.To == opt.Member
}

// types is the set --type keeps (empty: every type).
func (opt SeqOptions) types() map[sim.API]bool {
	want := map[sim.API]bool{}
	for _, t := range opt.Types {
		want[t] = true
	}
	return want
}

// Messages lists the packets of a sequence diagram's range, in trace
// order, every one (a diagram draws the first MaxSeqRows rows of them;
// CountMessages counts them without building them).
func Messages(w *sim.World, opt SeqOptions) []*sim.Packet {
	want := opt.types()
	var out []*sim.Packet
	lo, hi := packetRange(w, opt)
	for i, p := range w.Packets.Headers(lo) {
		if i >= hi {
			break
		}
		if opt.keeps(&p, want) {
			out = append(out, w.Packets.At(i))
		}
	}
	return out
}

// CountMessages is len(Messages(w, opt)), read off the trace's headers:
// the range's size when nothing but the range filters (no --type, no
// --member), without reading one.
func CountMessages(w *sim.World, opt SeqOptions) int {
	lo, hi := packetRange(w, opt)
	if opt.onlyRange() {
		return hi - lo
	}
	want, n := opt.types(), 0
	for i, p := range w.Packets.Headers(lo) {
		if i >= hi {
			break
		}
		if opt.keeps(&p, want) {
			n++
		}
	}
	return n
}

// onlyRange says whether opt filters by its ticks alone.
func (opt SeqOptions) onlyRange() bool { return len(opt.Types) == 0 && opt.Member == "" }

// packetRange is the indexes [lo, hi) of the trace's packets sent from
// tick opt.From to opt.To, found by search: the trace is in the order
// packets were sent (SentAt never goes back, as the views' searches by
// tick use), so a diagram of a big world's range reads that range alone,
// not the whole trace, and counts it without reading it.
func packetRange(w *sim.World, opt SeqOptions) (lo, hi int) {
	return tickRange(w.Packets.First(), w.Packets.Len(), w.Packets.SentAt, opt)
}

// eventRange is packetRange for the events, by their ticks.
func eventRange(w *sim.World, opt SeqOptions) (lo, hi int) {
	return tickRange(w.Events.First(), w.Events.Len(), w.Events.TickAt, opt)
}

// tickRange is the indexes [lo, hi) among first..n-1, whose ticks (tickAt)
// never go back, of those from tick opt.From to opt.To (to the end when
// opt.To < 0).
func tickRange(first, n int, tickAt func(int) int, opt SeqOptions) (lo, hi int) {
	lo = first + sort.Search(n-first, func(i int) bool { return tickAt(first+i) >= opt.From })
	hi = n
	if opt.To >= 0 {
		hi = lo + sort.Search(n-lo, func(i int) bool { return tickAt(lo+i) > opt.To })
	}
	return lo, hi
}

// Lanes lists the participants of a sequence diagram, left to right: the
// first client, B1, then the other clients (the seed draws C1, B1, C2),
// then anyone else a message names.
func Lanes(w *sim.World, pkts []*sim.Packet) []string {
	return lanesOf(natural.Sorted(w.Clients()), pkts)
}

// lanesOf is Lanes of these clients (sorted).
func lanesOf(clients []string, pkts []*sim.Packet) []string {
	var lanes []string
	if len(clients) > 0 {
		lanes = append(lanes, clients[0])
	}
	lanes = append(lanes, sim.Broker)
	if len(clients) > 1 {
		lanes = append(lanes, clients[1:]...)
	}
	seen := map[string]bool{}
	for _, l := range lanes {
		seen[l] = true
	}
	for _, p := range pkts {
		for _, n := range []string{p.From, p.To} {
			if !seen[n] {
				seen[n] = true
				lanes = append(lanes, n)
			}
		}
	}
	return lanes
}

// seqLanes picks the clients whose lanes a diagram draws: every client
// of a group of fewer than MaxSeqLanes, else --member's and the first to
// send or receive a message of the range, MaxSeqLanes-1 in all, sorted.
// all counts B1 and every client.
func seqLanes(w *sim.World, opt SeqOptions, want map[sim.API]bool) (clients []string, all int) {
	clients = natural.Sorted(w.Clients())
	if len(clients)+1 <= MaxSeqLanes {
		return clients, len(clients) + 1
	}
	picked := map[string]bool{}
	var keep []string
	add := func(c string) {
		if c != sim.Broker && c != "" && !picked[c] && len(keep) < MaxSeqLanes-1 && w.Member(c) != nil {
			picked[c] = true
			keep = append(keep, c)
		}
	}
	add(opt.Member)
	lo, hi := packetRange(w, opt)
	for i, p := range w.Packets.Headers(lo) {
		if len(keep) == MaxSeqLanes-1 || i >= hi {
			break
		}
		if opt.keeps(&p, want) {
			add(p.From)
			add(p.To)
		}
	}
	return natural.Sorted(keep), len(clients) + 1
}

func buildSeq(w *sim.World, opt SeqOptions) seqModel {
	want := opt.types()
	clients, allLanes := seqLanes(w, opt, want)
	inLane := map[string]bool{sim.Broker: true}
	for _, c := range clients {
		inLane[c] = true
	}
	cutLanes := len(clients)+1 < allLanes
	// The first MaxSeqRows messages and notes of the range on the lanes
	// drawn (every message's when every lane is), the others counted; only
	// those are built from the trace.
	m := seqModel{allLanes: allLanes}
	var pktIdx, evIdx []int
	lo, hi := packetRange(w, opt)
	counted := opt.onlyRange() // every packet of the range is a message: counted without reading
	if counted {
		m.msgs = hi - lo
	}
	for i, p := range w.Packets.Headers(lo) {
		if i >= hi {
			break
		}
		if !opt.keeps(&p, want) {
			continue
		}
		if !counted {
			m.msgs++
		}
		if cutLanes && (!inLane[p.From] || !inLane[p.To]) {
			continue
		}
		if len(pktIdx) == MaxSeqRows {
			m.more = true
			if counted {
				break // one more row is all the rest can tell
			}
			continue
		}
		pktIdx = append(pktIdx, i)
	}
	// With every packet row taken, a note after the last packet's tick is
	// never drawn (the rows end before it); the first one found only says
	// there is more, and the rest are not read.
	lastSent := -1
	if len(pktIdx) == MaxSeqRows {
		lastSent = w.Packets.SentAt(pktIdx[len(pktIdx)-1])
	}
	elo, ehi := eventRange(w, opt)
	for i, h := range w.Events.Headers(elo) {
		if i >= ehi {
			break
		}
		if !noteKinds[h.Kind] || h.Tick < opt.From || (opt.To >= 0 && h.Tick > opt.To) {
			continue
		}
		if opt.Member != "" && h.Member != opt.Member {
			continue
		}
		if cutLanes && !inLane[noteLane(&h)] {
			continue
		}
		if len(evIdx) == MaxSeqRows {
			m.more = true
			break
		}
		evIdx = append(evIdx, i)
		if lastSent >= 0 && h.Tick > lastSent {
			break
		}
	}
	var pkts []*sim.Packet
	for _, i := range pktIdx {
		pkts = append(pkts, w.Packets.At(i))
	}
	var evs []*sim.Event
	for _, i := range evIdx {
		e := w.Events.At(i)
		evs = append(evs, &e)
	}
	// Merge by tick: a tick's events come before the messages it sent.
	i, j := 0, 0
	for (i < len(evs) || j < len(pkts)) && len(m.rows) < MaxSeqRows {
		if j >= len(pkts) || (i < len(evs) && evs[i].Tick <= pkts[j].Sent) {
			m.rows = append(m.rows, seqRow{tick: evs[i].Tick, ev: evs[i]})
			i++
			continue
		}
		m.rows = append(m.rows, seqRow{tick: pkts[j].Sent, pkt: pkts[j]})
		j++
	}
	m.more = m.more || i < len(evs) || j < len(pkts)
	m.lanes = lanesOf(clients, pkts[:j])
	// In real time (the world's time ms) ticks read as times.
	m.clock = wallclock.Of(w)
	to := "now"
	if opt.To >= 0 {
		to = strconv.Itoa(opt.To)
	}
	m.title = fmt.Sprintf("group %s · messages from tick %d to %s · %s message(s)", w.Group.ID(), opt.From, to, digits.Int(m.msgs))
	if m.clock.Real() {
		if opt.To >= 0 {
			to = m.clock.TickAt(opt.To)
		}
		m.title = fmt.Sprintf("group %s · messages from %s to %s · %s message(s)", w.Group.ID(), m.clock.TickAt(opt.From), to, digits.Int(m.msgs))
	}
	if opt.Branch != "" && opt.Branch != "main" {
		m.title = "branch " + opt.Branch + " · " + m.title
	}
	if opt.Title != "" {
		m.title = opt.Title
	}
	return m
}

// messageText is a message's label: its API, its error, and the summary.
func messageText(p *sim.Packet) string {
	t := string(p.Type)
	if p.Error != sim.None {
		t += " " + p.Error.String()
	}
	if p.Summary != "" {
		t += " · " + p.Summary
	}
	return t
}

func noteLane(e *sim.Event) string {
	if e.Member == "" {
		return sim.Broker
	}
	return e.Member
}

// Geometry of the sequence diagram.
const (
	seqGutter = 58.0
	// seqGutterReal is the gutter in real time: 00:00:45.355 over its tick.
	seqGutterReal = 140.0
	seqLaneW      = 270.0
	seqHeadH      = 34.0
	seqRowH       = 22.0
	seqLineH      = 12.0 // each further line of a wrapped message label
	seqTop        = 44.0
	seqMaxLines   = 4
)

// Sequence draws the trace as a sequence diagram: one lane per
// participant, one arrow per message from its sender to its receiver,
// requests solid and answers dashed, and the protocol's events as notes.
func Sequence(w *sim.World, opt SeqOptions) *Picture {
	m := buildSeq(w, opt)
	// In real time the gutter holds a time and its tick.
	gutter := seqGutter
	if m.clock.Real() {
		gutter = seqGutterReal
	}
	laneX := map[string]float64{}
	for i, l := range m.lanes {
		laneX[l] = gutter + seqLaneW/2 + float64(i)*seqLaneW
	}
	width := gutter + float64(len(m.lanes))*seqLaneW + margin
	bodyTop := seqTop + seqHeadH + 12
	// A message whose label does not fit between its lanes wraps onto more
	// lines (C1's JoinGroup answer lists every member), and its row grows.
	rowY := make([]float64, len(m.rows)+1)
	rowY[0] = bodyTop
	for i, r := range m.rows {
		h := seqRowH
		if r.pkt != nil {
			h += float64(len(messageLines(r.pkt, laneX[r.pkt.From], laneX[r.pkt.To]))-1) * seqLineH
		}
		rowY[i+1] = rowY[i] + h
	}
	// The rows that fit seqMaxBodyH, and a line under them saying what
	// the diagram leaves out.
	n := len(m.rows)
	room := math.Min(seqMaxBodyH, seqMaxPixels/width-(bodyTop+16+seqHeadH+margin+2*seqRowH))
	for n > 0 && rowY[n]-bodyTop > room {
		n--
	}
	rows, cut := m.rows[:n], m.cutLine(n)
	height := rowY[n] + 16 + seqHeadH + margin
	if n == 0 {
		height += seqRowH
	}
	if cut != "" {
		height += seqRowH
	}
	pic, s := newPicture(width, height, "kgrepl-sequence", m.title)
	pic.Cut = cut
	s.text(margin, margin+14, fitWidth(m.title, textStyle{size: 15, bold: true}, width-2*margin), textStyle{size: 15, bold: true, color: Hex(Ink)})
	bottomHead := height - margin - seqHeadH
	for _, l := range m.lanes {
		x := laneX[l]
		col, label := laneStyle(l)
		s.group("class", "lane", "data-lane", l, "data-x", num(x))
		s.line(x, seqTop+seqHeadH, x, bottomHead, "#b0b0b0", 1, "4 4")
		for _, y := range []float64{seqTop, bottomHead} {
			s.rect(x-70, y, 140, seqHeadH, ink{fill: Hex(Tint(col, 0.85)), stroke: Hex(col), width: 1.5, rx: 5})
			s.text(x, y+22, fitWidth(label, textStyle{size: 13, bold: true}, 132), textStyle{size: 13, bold: true, anchor: "middle", color: Hex(col)})
		}
		s.end()
	}
	if cut != "" {
		s.group("class", "sequence-cut")
		y := rowY[n] + seqRowH - 6
		if n == 0 {
			y += seqRowH // under "no messages in this range"
		}
		s.text(gutter, y, fitWidth(cut, textStyle{size: 11, bold: true}, width-gutter-margin), textStyle{size: 11, bold: true, color: Hex(Ink)})
		s.end()
	}
	if n == 0 {
		s.text(width/2, bodyTop+14, "no messages in this range", textStyle{size: 12, italic: true, anchor: "middle", color: Hex(Faint)})
	}
	lastTick := -1
	for i, r := range rows {
		y := rowY[i]
		if r.tick != lastTick {
			lastTick = r.tick
			s.group("class", "tick", "data-tick", strconv.Itoa(r.tick))
			s.line(gutter-50, y, width-margin, y, "#ececec", 1, "")
			if m.clock.Real() {
				// The time on the row's line, its tick under it, smaller.
				s.text(seqGutter-46, y+10, m.clock.At(r.tick), textStyle{size: 10.5, mono: true, color: Hex(Faint)})
				s.text(seqGutter-46, y+20, "tick "+strconv.Itoa(r.tick), textStyle{size: 8.5, mono: true, color: Hex(Faint)})
			} else {
				s.text(gutter-46, y+14, "t="+strconv.Itoa(r.tick), textStyle{size: 10.5, mono: true, color: Hex(Faint)})
			}
			s.end()
		}
		if r.ev != nil {
			drawNote(s, r.ev, laneX[noteLane(r.ev)], y, width, gutter, m.clock)
			continue
		}
		drawMessage(s, r.pkt, laneX[r.pkt.From], laneX[r.pkt.To], y)
	}
	return pic
}

func laneStyle(l string) (c color.RGBA, label string) {
	if l == sim.Broker {
		return Broker, "B1 coordinator"
	}
	if _, ok := clientNumber(l); ok {
		return ClientColor(l), l
	}
	return Faint, l
}

func drawNote(s *pen, e *sim.Event, x, y, width, gutter float64, clk wallclock.Clock) {
	t := fitWidth(truncate(clk.Annotate(e.Text), 96), textStyle{size: 10}, width-gutter-margin-14)
	tw := textWidth(t, 10, false) + 14
	left := x - tw/2
	if left < gutter {
		left = gutter
	}
	if left+tw > width-margin {
		left = width - margin - tw
	}
	fill, stroke, tc := "#fffbe6", "#e0c860", Hex(Ink)
	switch e.Kind {
	case sim.EvCrash, sim.EvCommitFailed, sim.EvFenced, sim.EvZombie, sim.EvPollTimeout, sim.EvRemoved:
		fill, stroke, tc = "#fdeaea", Hex(Zombie), Hex(Zombie)
	}
	s.group("class", "note", "data-kind", string(e.Kind), "data-tick", strconv.Itoa(e.Tick))
	s.rect(left, y+3, tw, seqRowH-5, ink{fill: fill, stroke: stroke, width: 1, rx: 3})
	s.text(left+7, y+15, t, textStyle{size: 10, color: tc})
	s.end()
}

func drawMessage(s *pen, p *sim.Packet, x1, x2, y float64) {
	col := Hex(Broker)
	if p.From != sim.Broker {
		col = ClientHex(p.From)
	}
	if p.Error != sim.None {
		col = Hex(Zombie)
	}
	dash := ""
	if p.Response {
		dash = "6 3"
	}
	inFlight := p.Delivered < 0 && !p.Lost
	if inFlight {
		dash = "2 3"
	}
	end := x2
	if p.Lost {
		end = x1 + (x2-x1)*0.6
	}
	// data-x1 and data-x2 are where the arrow starts and ends, data-dash its pattern.
	s.group("class", "message", "data-type", string(p.Type), "data-from", p.From, "data-to", p.To,
		"data-sent", strconv.Itoa(p.Sent), "data-response", strconv.FormatBool(p.Response),
		"data-x1", num(x1), "data-x2", num(end), "data-dash", dash)
	if x1 == x2 {
		// A message to itself (B1 writing transaction markers): a loop.
		s.polyline(col, 1.3, dash, x1, y+8, x1+26, y+8, x1+26, y+16, x1+2, y+16)
		s.arrowHead(x1+26, y+16, x1+2, y+16, col)
		s.text(x1+32, y+15, truncate(arrowLabel(p), 58), textStyle{size: 10, color: col})
		s.end()
		return
	}
	lines := messageLines(p, x1, x2)
	ly := y + 16 + float64(len(lines)-1)*seqLineH
	s.line(x1, ly, end, ly, col, 1.4, dash)
	if p.Lost {
		s.text(end, ly+4, "✗", textStyle{size: 13, bold: true, anchor: "middle", color: Hex(Zombie)})
	} else {
		s.arrowHead(x1, ly, x2, ly, col)
	}
	for k, l := range lines {
		s.text((x1+x2)/2, ly-4-float64(len(lines)-1-k)*seqLineH, l, textStyle{size: 10, anchor: "middle", color: col})
	}
	s.end()
}

// arrowLabel is the text over a message's arrow.
func arrowLabel(p *sim.Packet) string {
	label := messageText(p)
	if p.Lost {
		label += " (lost)"
	} else if p.Delivered < 0 {
		label += " (in flight)"
	}
	return label
}

// messageLines is the arrow's label cut into the lines that fit between
// the two lanes, at spaces, at most seqMaxLines of them (the last one
// truncated if even those are not enough).
func messageLines(p *sim.Packet, x1, x2 float64) []string {
	label := arrowLabel(p)
	span := x2 - x1
	if span < 0 {
		span = -span
	}
	width := max(span-16, 80)
	// Break between a label's clauses ("gen 2, member C1-1, ..., members
	// [C1-1 C2-1]") where they fit, between words where one clause does not.
	var chunks []string
	for _, clause := range splitClauses(label) {
		if textWidth(clause, 10, false) <= width {
			chunks = append(chunks, clause)
			continue
		}
		for _, w := range strings.Fields(clause) {
			chunks = append(chunks, w+" ")
		}
	}
	var lines []string
	line := ""
	for i, c := range chunks {
		next := line + c
		if line == "" || textWidth(strings.TrimSpace(next), 10, false) <= width {
			line = next
			continue
		}
		if len(lines) == seqMaxLines-1 {
			// No room for more lines: the rest goes on the last one, cut to fit.
			line += strings.Join(chunks[i:], "")
			break
		}
		lines = append(lines, fitWidth(strings.TrimSpace(line), textStyle{size: 10}, width))
		line = c
	}
	return append(lines, fitWidth(strings.TrimSpace(line), textStyle{size: 10}, width))
}

// splitClauses cuts a label after each ", " and " · ", keeping them.
func splitClauses(label string) []string {
	var out []string
	for label != "" {
		cut := -1
		for _, sep := range []string{", ", " · "} {
			if i := strings.Index(label, sep); i >= 0 && (cut < 0 || i+len(sep) < cut) {
				cut = i + len(sep)
			}
		}
		if cut < 0 {
			return append(out, label)
		}
		out = append(out, label[:cut])
		label = label[cut:]
	}
	return out
}

// Mermaid writes the same diagram as Mermaid sequenceDiagram text.
func Mermaid(w *sim.World, opt SeqOptions) string {
	m := buildSeq(w, opt)
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	b.WriteString("    %% " + m.title + "\n")
	for _, l := range m.lanes {
		if l == sim.Broker {
			b.WriteString("    participant B1 as B1 (coordinator)\n")
			continue
		}
		b.WriteString("    participant " + mermaidID(l) + "\n")
	}
	lastTick := -1
	for _, r := range m.rows {
		prefix := ""
		if r.tick != lastTick {
			lastTick = r.tick
			prefix = m.clock.Stamp(r.tick) + " "
		}
		if r.ev != nil {
			fmt.Fprintf(&b, "    Note over %s: %s%s\n", mermaidID(noteLane(r.ev)), prefix, mermaidText(m.clock.Annotate(r.ev.Text)))
			continue
		}
		p := r.pkt
		arrow := "->>"
		if p.Response {
			arrow = "-->>"
		}
		label := messageText(p)
		switch {
		case p.Lost:
			arrow = "-x"
			if p.Response {
				arrow = "--x"
			}
			label += " (lost)"
		case p.Delivered < 0:
			arrow = "-)"
			if p.Response {
				arrow = "--)"
			}
			label += " (in flight)"
		}
		fmt.Fprintf(&b, "    %s%s%s: %s%s\n", mermaidID(p.From), arrow, mermaidID(p.To), prefix, mermaidText(label))
	}
	if cut := m.cutLine(len(m.rows)); cut != "" {
		b.WriteString("    %% " + cut + "\n")
	}
	return b.String()
}

func mermaidID(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		} else {
			b.WriteRune('_')
		}
	}
	return b.String()
}

// mermaidText escapes what Mermaid reads as syntax in a message: ';' ends
// a statement and '#' starts an entity code.
func mermaidText(s string) string {
	r := strings.NewReplacer("#", "#35;", ";", "#59;", "\n", " ", "%%", "#37;#37;")
	return r.Replace(s)
}
