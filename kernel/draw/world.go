package draw

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// WorldOptions tune the world diagram.
type WorldOptions struct {
	// Branch is named in the title when it is not "" or "main".
	Branch string
	// Title replaces the title when not "".
	Title string
	// Wire is the least width between the members and B1 (0: wireW); the
	// frames of an animation share one, so B1 stays in place.
	Wire float64
}

// The world diagram's geometry, in SVG pixels.
const (
	margin      = 16.0
	headerH     = 46.0
	memberW     = 290.0
	wireW       = 230.0 // the least room between the members and B1; long packet labels widen it
	maxWireW    = 440.0
	memberMinH  = 80.0
	memberGap   = 10.0
	packetStep  = 17.0
	cellH       = 22.0
	cellGap     = 2.0
	logLabelW   = 104.0
	logRowGap   = 30.0 // room under a row of cells for the committed pointer, above it for HW and LSO
	inputPerRow = 30
	outPerRow   = 20
	legendH     = 58.0
)

// memberRow is one member process drawn in the left column.
type memberRow struct {
	m       *sim.Member
	y, h    float64
	packets []*sim.Packet
}

// World draws the world now, as the seed's page does: the members on the
// left with their state and partitions, the packets in flight in the
// middle, and B1 on the right with the group coordinator, the transaction
// coordinator and every partition log as cells.
func World(w *sim.World, opt WorldOptions) string {
	rows := memberRows(w)
	var self []*sim.Packet // B1 to B1 (WriteTxnMarkers)
	var orphans []*sim.Packet
	for _, p := range w.InFlight() {
		switch {
		case p.From == sim.Broker && p.To == sim.Broker:
			self = append(self, p)
		default:
			if r := rowFor(rows, p); r != nil {
				r.packets = append(r.packets, p)
			} else {
				orphans = append(orphans, p)
			}
		}
	}
	y := margin + headerH
	for _, r := range rows {
		r.y = y
		r.h = memberMinH
		if need := 16 + packetStep*float64(len(r.packets)); need > r.h {
			r.h = need
		}
		y += r.h + memberGap
	}
	membersBottom := y

	b := newBrokerLayout(w, self)
	wire := math.Max(wireW, opt.Wire)
	for _, r := range rows {
		for _, p := range r.packets {
			wire = math.Max(wire, textWidth(fullPacketLabel(p), 9.5, false)+28)
		}
	}
	wire = math.Min(wire, math.Max(maxWireW, opt.Wire))
	bx := margin + memberW + wire
	width := bx + b.width + margin
	height := margin + headerH + b.height
	if membersBottom+float64(len(orphans))*packetStep > height {
		height = membersBottom + float64(len(orphans))*packetStep
	}
	legendY := height + 8
	height = legendY + legendH + margin
	if width < 900 {
		width = 900
	}

	var s svg
	title := fmt.Sprintf("group %s · tick %d · %s · generation %d", w.Group.ID, w.Tick, w.Group.State, w.Group.Generation)
	if w.Group.Type == sim.ConsumerGroup {
		title = fmt.Sprintf("group %s · tick %d · %s · group epoch %d", w.Group.ID, w.Tick, w.Group.State, w.Group.GroupEpoch)
	}
	if opt.Branch != "" && opt.Branch != "main" {
		title = "branch " + opt.Branch + " · " + title
	}
	if opt.Title != "" {
		title = opt.Title
	}
	s.open(width, height, "kgrepl-diagram", title)
	s.text(margin, margin+16, title, textStyle{size: 17, bold: true, color: Hex(Ink)})
	s.text(margin, margin+34, subtitle(w), textStyle{size: 11.5, color: Hex(Faint)})

	for _, r := range rows {
		drawMember(&s, w, r)
		drawPackets(&s, r, margin+memberW, bx)
	}
	for i, p := range orphans {
		yy := membersBottom + float64(i)*packetStep + 10
		s.text(margin, yy, fmt.Sprintf("%s → %s: %s", p.From, p.To, packetLabel(p)), textStyle{size: 10.5, color: Hex(Faint), class: "packet"})
	}
	b.draw(&s, w, bx, margin+headerH)
	drawWorldLegend(&s, margin, legendY)
	// Animate reads how far a packet's dot travels in this frame.
	return strings.Replace(s.close(), `class="kgrepl-diagram"`,
		`class="kgrepl-diagram" data-packet-run="`+num(packetRun(margin+memberW, bx))+`"`, 1)
}

// subtitle sums up the settings that shape what the picture shows.
func subtitle(w *sim.World) string {
	c := w.Cfg.Client
	// A consumer group's assignor runs on the coordinator and its session
	// timeout is the broker's: the client-side settings would name what
	// does not apply.
	assignor, session := "assignor "+c.Assignor, fmt.Sprintf("session.timeout %d", c.SessionTimeout)
	if w.Group.Type == sim.ConsumerGroup {
		assignor = "group.protocol consumer · assignor " + w.Group.Assignor
		session = fmt.Sprintf("group.consumer.session.timeout %d", w.Cfg.ConsumerSessionTimeout)
	}
	parts := []string{
		assignor,
		"commit " + string(c.Commit),
		"producer " + string(c.Producer()),
		"reader " + w.Cfg.Isolation,
		fmt.Sprintf("%s · max.poll.interval %d", session, c.MaxPollInterval),
		fmt.Sprintf("pause meter %d", w.Meter.Total),
	}
	return strings.Join(parts, " · ")
}

// memberRows lists the processes to draw: each client's newest process,
// and any older process still running (a zombie).
func memberRows(w *sim.World) []*memberRow {
	var rows []*memberRow
	for _, c := range w.Clients() {
		cur := w.Member(c)
		for _, p := range w.Processes() {
			if p.Client == c && p != cur && p.Alive {
				rows = append(rows, &memberRow{m: p})
			}
		}
		if cur != nil {
			rows = append(rows, &memberRow{m: cur})
		}
	}
	return rows
}

func rowFor(rows []*memberRow, p *sim.Packet) *memberRow {
	client, inc := p.From, p.FromInc
	if p.From == sim.Broker {
		client, inc = p.To, p.ToInc
	}
	var byClient *memberRow
	for _, r := range rows {
		if r.m.Client == client {
			if r.m.Inc == inc {
				return r
			}
			byClient = r
		}
	}
	return byClient
}

// recordInHand is the record a member is processing now, and its partition.
func recordInHand(w *sim.World, m *sim.Member) (string, sim.TopicPartition, bool) {
	busy, _ := m.Processing()
	if !busy {
		return "", sim.TopicPartition{}, false
	}
	recs, done := m.Batch()
	if done >= len(recs) {
		return "", sim.TopicPartition{}, false
	}
	rec := recs[done]
	i := strings.LastIndexByte(rec, '.')
	if i <= 0 {
		return rec, sim.TopicPartition{}, false
	}
	tp, err := w.ParsePartition(rec[:i])
	if err != nil {
		return rec, sim.TopicPartition{}, false
	}
	return rec, tp, true
}

// RecordInHand is the record m is processing now and its partition (false
// when it has none in hand); the charts use it to show zombie processing.
func RecordInHand(w *sim.World, m *sim.Member) (string, sim.TopicPartition, bool) {
	return recordInHand(w, m)
}

// IsZombie reports whether m runs on without a place in the group: a
// process replaced by a restart or fenced (sim.Member.Zombie), one out of
// the group after a poll timeout, or one the coordinator has removed while
// it still believes it is a member. A process on its way in (finding the
// coordinator, JoinGroup in flight) is joining, not a zombie.
func IsZombie(w *sim.World, m *sim.Member) bool {
	if !m.Alive {
		return false
	}
	switch {
	case m.Zombie, m.Phase == sim.PhaseOut:
		return true
	case m.Phase == sim.PhaseFinding || m.Phase == sim.PhaseJoining:
		return false
	}
	return m.MemberID == "" || w.Group.MemberByID(m.MemberID) == nil
}

// stopped says how a process that no longer runs ended: "crashed",
// "closed", or "stopped for the restart", from its client's last such event.
func stopped(w *sim.World, m *sim.Member) string {
	how := "closed"
	for i, e := range w.Events.Headers(0) {
		if e.Member != m.Client {
			continue
		}
		switch e.Kind {
		case sim.EvCrash:
			how = "crashed"
		case sim.EvClosed:
			how = "closed"
			if strings.Contains(w.Events.At(i).Text, "for the restart") {
				how = "stopped for the restart"
			}
		}
	}
	return how
}

func drawMember(s *svg, w *sim.World, r *memberRow) {
	m := r.m
	x, y := margin, r.y
	col := ClientColor(m.Client)
	zombie := IsZombie(w, m)
	fill, stroke, dash := Hex(Tint(col, 0.9)), Hex(col), ""
	switch {
	case !m.Alive:
		fill, stroke, dash = "#f4f4f4", Hex(Faint), "4 3"
	case zombie:
		fill, stroke = "#fbeaea", Hex(Zombie)
	}
	s.group("class", "member", "data-client", m.Client, "data-process", strconv.Itoa(m.Inc))
	s.b.WriteString("<rect")
	s.attrs("x", num(x), "y", num(y), "width", num(memberW), "height", num(r.h), "rx", "6", "fill", fill,
		"stroke", stroke, "stroke-width", "1.5", "stroke-dasharray", dash)
	s.b.WriteString("/>\n")
	s.rect(x, y, 6, r.h, Hex(col), "", 0, "")
	nameCol := Hex(col)
	if !m.Alive {
		nameCol = Hex(Faint)
	}
	s.text(x+14, y+19, m.Client, textStyle{size: 16, bold: true, color: nameCol})
	id := m.MemberID
	if id == "" {
		id = "no member id"
	}
	var badges []string
	if m.Alive && m.MemberID != "" && w.Group.Leader == m.MemberID {
		badges = append(badges, "leader")
	}
	if m.Static() {
		badges = append(badges, "static "+m.Cfg.InstanceID)
	}
	info := fmt.Sprintf("%s · process %d", id, m.Inc)
	if len(badges) > 0 {
		info += " · " + strings.Join(badges, " · ")
	}
	s.text(x+14+textWidth(m.Client, 16, false)+8, y+18, info, textStyle{size: 11, color: Hex(Ink)})

	// A consumer group's members (KIP-848) carry a member epoch where a
	// classic member has a generation, and join with a heartbeat.
	gen, joinReq := "gen", "JoinGroup"
	if w.Group.Type == sim.ConsumerGroup {
		gen, joinReq = "epoch", "heartbeat"
	}
	var state string
	switch {
	case !m.Alive:
		state = stopped(w, m)
	case !zombie && (m.Phase == sim.PhaseFinding || m.Phase == sim.PhaseJoining):
		state = "joining · " + joinReq + " in flight"
		if m.Phase == sim.PhaseFinding {
			state = "joining · finding the coordinator"
		}
		if m.Generation >= 0 {
			state = "re" + state + fmt.Sprintf(" · had %s %d · %s", gen, m.Generation, m.LoopState())
		}
	default:
		state = fmt.Sprintf("%s %d · %s · %s", gen, m.Generation, m.Phase, m.LoopState())
		if rec, _, ok := recordInHand(w, m); ok {
			_, slow := m.Processing()
			state += " " + rec
			if slow {
				state += " (slow)"
			}
		}
	}
	stCol := Hex(Ink)
	if zombie {
		state = "ZOMBIE · " + state
		stCol = Hex(Zombie)
	}
	s.text(x+14, y+36, truncate(state, 50), textStyle{size: 11, color: stCol, class: "member-state"})

	// Owned partitions as chips; a paused one is grey.
	paused := map[sim.TopicPartition]bool{}
	for _, tp := range w.PausedPartitions() {
		paused[tp] = true
	}
	cx := x + 14
	if len(m.Owned) == 0 {
		s.text(cx, y+55, "owns nothing", textStyle{size: 11, italic: true, color: Hex(Faint)})
	}
	for _, tp := range m.Owned {
		name := w.ShortName(tp)
		cw := textWidth(name, 10.5, true) + 10
		if cx+cw > x+memberW-8 {
			s.text(cx, y+55, "…", textStyle{size: 11, color: Hex(Ink)})
			break
		}
		f, tc, edge := Hex(col), "#ffffff", ""
		switch {
		case paused[tp] || !m.Alive:
			f, tc = Hex(Paused), Hex(Ink)
		case zombie:
			f, tc, edge = "#ffffff", Hex(col), Hex(col) // it believes it owns them; the group does not
		}
		s.rect(cx, y+43, cw, 16, f, edge, 1, "chip", "rx", "3", "data-partition", tp.String())
		s.text(cx+cw/2, y+55, name, textStyle{size: 10.5, mono: true, color: tc, anchor: "middle"})
		cx += cw + 4
	}

	// Offsets go into the transaction with a transactional producer, whatever the commit setting says.
	prod := "commit " + string(m.Cfg.Commit) + " · producer " + string(m.Cfg.Producer())
	if id := m.Cfg.TransactionalID; id != "" {
		prod = id
		if e := w.Txn.Entry(id); e != nil {
			prod += fmt.Sprintf(" · pid %d · epoch %d · %s", e.PID, e.Epoch, e.State)
		}
	}
	s.text(x+14, y+73, truncate(prod, 54), textStyle{size: 10.5, color: Hex(Faint)})
	s.end()
}

// packetLabel is what an arrow says: the API, an error, a short summary.
func packetLabel(p *sim.Packet) string {
	l := string(p.Type)
	if p.Response && p.Type != sim.RebalanceNotification {
		l += " response"
	}
	if p.Error != sim.None {
		l += " " + p.Error.String()
	}
	return l
}

// fullPacketLabel is an arrow's label with the packet's summary.
func fullPacketLabel(p *sim.Packet) string {
	l := packetLabel(p)
	if p.Summary != "" {
		l += " · " + p.Summary
	}
	return l
}

// WireOf is the width a diagram gave the wire between the members and B1
// (0 when doc is not a world diagram); see WorldOptions.Wire.
func WireOf(doc string) float64 {
	if m := attrRun.FindStringSubmatch(doc); m != nil {
		run, _ := strconv.ParseFloat(m[1], 64)
		return run + 16
	}
	return 0
}

// packetRun is how far a packet's dot travels: from its sender's end of
// the arrow to the other (the animation moves it by this much).
func packetRun(x0, x1 float64) float64 { return x1 - x0 - 16 }

// drawPackets draws a member's packets in flight as arrows between x0 and
// x1 with their labels, cut to fit before B1's box, and a dot at the
// sender's end (an animated diagram moves it to the receiver).
func drawPackets(s *svg, r *memberRow, x0, x1 float64) {
	for i, p := range r.packets {
		y := r.y + 18 + float64(i)*packetStep
		col := ClientHex(r.m.Client)
		if p.From == sim.Broker {
			col = Hex(Broker)
		}
		if p.Error != sim.None {
			col = Hex(Zombie)
		}
		a, b := x0+8, x1-8
		dir := "r"
		if p.From == sim.Broker {
			a, b, dir = b, a, "l"
		}
		s.group("class", "packet", "data-type", string(p.Type), "data-from", p.From, "data-to", p.To)
		s.line(a, y+3, b, y+3, col, 1.4, "", "")
		s.arrowHead(a, y+3, b, y+3, col)
		s.b.WriteString("<circle")
		s.attrs("class", "pkt-dot "+dir, "cx", num(a), "cy", num(y+3), "r", "3.5", "fill", col, "stroke", "#ffffff", "stroke-width", "1")
		s.b.WriteString("/>\n")
		s.text(x0+12, y, fitWidth(fullPacketLabel(p), 9.5, x1-x0-24), textStyle{size: 9.5, color: col})
		s.end()
	}
}

// fitWidth cuts s with an ellipsis so it is at most width wide at a font size.
func fitWidth(s string, size, width float64) string {
	if textWidth(s, size, false) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 1 && textWidth(string(r)+"…", size, false) > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// brokerLayout measures B1's box before drawing it.
type brokerLayout struct {
	width, height float64
	lines         []brokerLine
	logs          []logLayout
	logsTop       float64
}

type brokerLine struct {
	text  string
	color string
	bold  bool
	size  float64
}

type logLayout struct {
	tp     sim.TopicPartition
	output bool
	cellW  float64
	perRow int
	rows   int
	y      float64     // top of the first row, relative to logsTop
	nth    map[int]int // offset → the invoice's number for its input record, from 2 (duplicates)
}

func newBrokerLayout(w *sim.World, self []*sim.Packet) *brokerLayout {
	b := &brokerLayout{}
	g := w.Group
	leader := "-"
	if g.Leader != "" {
		leader = g.Leader
	}
	proto := g.Assignor
	if proto == "" {
		proto = "-"
	}
	b.lines = append(b.lines,
		brokerLine{text: "B1 · group coordinator of " + g.ID + " · transaction coordinator", bold: true, size: 13, color: Hex(Ink)},
		brokerLine{text: fmt.Sprintf("state %s · generation %d · leader %s · protocol %s", g.State, g.Generation, leader, proto), size: 12, color: Hex(Ink), bold: true})
	consumer := g.Type == sim.ConsumerGroup
	if consumer {
		// A consumer group (KIP-848): no generation and no leader; the
		// coordinator's epochs and its server-side assignor instead.
		b.lines[1].text = fmt.Sprintf("state %s · group epoch %d · target assignment epoch %d · assignor %s", g.State, g.GroupEpoch, g.AssignmentEpoch, proto)
	}
	var ms []string
	for _, gm := range g.Members() {
		t := gm.MemberID + " " + w.PartList(gm.Assignment)
		if (g.State == sim.PreparingRebalance) && gm.Joined {
			t += " (joined)"
		}
		if consumer {
			// Each member's epoch, and where it is going while it reconciles.
			cur, target := w.PartList(gm.Assignment), w.PartList(gm.Target) // sorted: equal sets, equal text
			t = fmt.Sprintf("%s e%d %s", gm.MemberID, gm.MemberEpoch, cur)
			if cur != target {
				t += " → " + target
			}
		}
		ms = append(ms, t)
	}
	if len(ms) == 0 {
		ms = []string{"none"}
	}
	b.lines = append(b.lines, brokerLine{text: "members: " + strings.Join(ms, " · "), size: 11, color: Hex(Ink)})
	var pend []string
	for _, tp := range w.InputPartitions() {
		if g.HasPending(tp) {
			pend = append(pend, w.ShortName(tp))
		}
	}
	if len(pend) > 0 {
		b.lines = append(b.lines, brokerLine{text: "pending transactional offsets: " + strings.Join(pend, " ") + " (OffsetFetch answers UNSTABLE_OFFSET_COMMIT)", size: 11, color: Hex(Zombie)})
	}
	for _, e := range w.Txn.Entries() {
		t := fmt.Sprintf("%s · pid %d · epoch %d · %s", e.TransactionalID, e.PID, e.Epoch, e.State)
		var parts []string
		for _, tp := range e.Partitions {
			parts = append(parts, tp.String())
		}
		if e.Group != "" {
			parts = append(parts, "__consumer_offsets("+e.Group+")")
		}
		if len(parts) > 0 {
			t += " · " + strings.Join(parts, ", ")
		}
		if e.Start >= 0 {
			t += fmt.Sprintf(" · open since tick %d (timeout %d)", e.Start, e.Timeout)
		}
		b.lines = append(b.lines, brokerLine{text: t, size: 11, color: ClientHex(strings.TrimPrefix(e.TransactionalID, "tx-"))})
	}
	for _, p := range self {
		b.lines = append(b.lines, brokerLine{text: "in flight ↻ " + string(p.Type) + " " + p.Summary, size: 11, color: Hex(Broker)})
	}
	textW := 0.0
	for _, l := range b.lines {
		tw := textWidth(l.text, l.size, false)
		if l.bold {
			tw *= 1.08
		}
		if tw > textW {
			textW = tw
		}
	}
	b.logsTop = 14 + 18*float64(len(b.lines)) + 12
	y := 0.0
	cellsW := 0.0
	nth := InvoiceNumbers(w)
	for i, tp := range append(append([]sim.TopicPartition{}, w.InputPartitions()...), w.OutputPartitions()...) {
		l := logLayout{tp: tp, output: i >= len(w.InputPartitions())}
		l.cellW, l.perRow = 24, inputPerRow
		if l.output {
			l.perRow = outPerRow
		}
		l.nth = nth[tp]
		for i, c := range w.Log(tp).Cells.All() {
			if cw := textWidth(cellText(c, l.nth[i]), 9.5, true) + 10; cw > l.cellW {
				l.cellW = cw
			}
		}
		n := w.Log(tp).HW()
		l.rows = (n + l.perRow - 1) / l.perRow
		if l.rows == 0 {
			l.rows = 1
		}
		y += 14 // room for the HW / LSO labels above
		l.y = y
		y += float64(l.rows)*(cellH+logRowGap) - 4
		cols := l.perRow
		if n < cols {
			cols = n
		}
		if rw := float64(cols)*(l.cellW+cellGap) + 70; rw > cellsW {
			cellsW = rw
		}
		b.logs = append(b.logs, l)
	}
	b.width = 14 + logLabelW + cellsW + 14
	if textW+28 > b.width {
		b.width = textW + 28
	}
	if b.width < 420 {
		b.width = 420
	}
	b.height = b.logsTop + y + 10
	return b
}

// superscript writes n in superscript digits (o2.3² is the second invoice of o2.3).
func superscript(n int) string {
	digits := []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
	var out []rune
	for _, d := range strconv.Itoa(n) {
		out = append(out, digits[d-'0'])
	}
	return string(out)
}

// cellText is what a log cell says: an input cell its offset, an invoice
// its input record (with ✗ when aborted, a superscript n when it is the
// n-th invoice of that record: a duplicate), a marker C or A.
func cellText(c sim.Cell, nth int) string {
	switch {
	case c.Control == "COMMIT":
		return "C"
	case c.Control != "":
		return "A"
	case c.Source != "":
		t := c.Source
		if c.Txn == sim.TxnAborted {
			t += "✗"
		}
		if nth > 1 {
			t += superscript(nth)
		}
		return t
	}
	return strconv.Itoa(c.Offset)
}

// InvoiceNumbers numbers the invoices of each input record in the order a
// read_uncommitted reader meets them (partition by partition, by offset, as
// sim.World.Delivery counts duplicates): the value at an output cell is 2
// for the second invoice of its record, and so on. First invoices are left out.
func InvoiceNumbers(w *sim.World) map[sim.TopicPartition]map[int]int {
	out := map[sim.TopicPartition]map[int]int{}
	seen := map[string]int{}
	for _, r := range w.ReadTopic(w.Topo.Output.Name, "read_uncommitted") {
		seen[r.Source]++
		if n := seen[r.Source]; n > 1 {
			if out[r.Partition] == nil {
				out[r.Partition] = map[int]int{}
			}
			out[r.Partition][r.Offset] = n
		}
	}
	return out
}

func (b *brokerLayout) draw(s *svg, w *sim.World, x, y float64) {
	s.group("class", "broker", "data-node", sim.Broker)
	s.b.WriteString("<rect")
	s.attrs("x", num(x), "y", num(y), "width", num(b.width), "height", num(b.height), "rx", "8",
		"fill", "#fafafa", "stroke", Hex(Broker), "stroke-width", "1.5")
	s.b.WriteString("/>\n")
	ly := y + 20
	for _, l := range b.lines {
		s.text(x+14, ly, l.text, textStyle{size: l.size, bold: l.bold, color: l.color})
		ly += 18
	}
	s.line(x+10, y+b.logsTop-8, x+b.width-10, y+b.logsTop-8, "#dddddd", 1, "", "")
	for _, l := range b.logs {
		drawLog(s, w, l, x+14, y+b.logsTop+l.y)
	}
	s.end()
}

// consumerOf is the live group member consuming tp now, if any.
func consumerOf(w *sim.World, tp sim.TopicPartition) *sim.Member {
	for _, c := range w.Clients() {
		m := w.Member(c)
		if m == nil || !m.Alive || IsZombie(w, m) {
			continue
		}
		for _, o := range m.Owned {
			if o == tp {
				return m
			}
		}
	}
	return nil
}

func drawLog(s *svg, w *sim.World, l logLayout, x, y float64) {
	lg := w.Log(l.tp)
	hw, lso := lg.HW(), lg.LSO()
	committed, hasCommitted := -1, false
	if rec, ok := w.Group.Committed(l.tp); ok && !l.output {
		committed, hasCommitted = rec.Offset, true
	}
	owner := consumerOf(w, l.tp)
	pos := -1
	if owner != nil {
		if p, ok := owner.Position(l.tp); ok {
			pos = p
		}
	}
	committedAttr := ""
	if hasCommitted {
		committedAttr = strconv.Itoa(committed)
	}
	s.group("class", "log", "data-partition", l.tp.String(), "data-hw", strconv.Itoa(hw), "data-lso", strconv.Itoa(lso),
		"data-committed", committedAttr)
	s.text(x, y+15, l.tp.String(), textStyle{size: 12, bold: true, color: Hex(Ink)})
	switch {
	case l.output:
		s.text(x, y+29, "output", textStyle{size: 10, color: Hex(Faint)})
	case owner != nil:
		paused := false
		for _, tp := range w.PausedPartitions() {
			paused = paused || tp == l.tp
		}
		t := "→ " + owner.Client
		if paused {
			t += " (paused)"
		}
		s.text(x, y+29, t, textStyle{size: 10.5, bold: true, color: ClientHex(owner.Client)})
	default:
		s.text(x, y+29, "no consumer", textStyle{size: 10, color: Hex(Faint)})
	}
	cx := x + logLabelW
	at := func(off int) (float64, float64) {
		row := off / l.perRow
		col := off % l.perRow
		if off == hw && off > 0 && col == 0 {
			row, col = row-1, l.perRow // the end of the log sits after the last cell
		}
		return cx + float64(col)*(l.cellW+cellGap), y + float64(row)*(cellH+logRowGap)
	}
	for i, c := range lg.Cells.All() {
		cxx, cy := at(i)
		fill, stroke, dash, tc := "#ffffff", "#9a9a9a", "", Hex(Faint)
		kind := "record"
		switch {
		case c.Control == "COMMIT":
			fill, stroke, tc, kind = Hex(Committed), Hex(Committed), "#ffffff", "marker-commit"
		case c.Control != "":
			fill, stroke, tc, kind = Hex(Zombie), Hex(Zombie), "#ffffff", "marker-abort"
		case l.output && c.Txn == sim.TxnOpen:
			fill, stroke, dash, tc, kind = "#ffffff", ClientHex(c.Producer), "3 2", Hex(Ink), "open"
		case l.output && c.Txn == sim.TxnAborted:
			fill, stroke, tc, kind = "#f7d4d4", Hex(Zombie), Hex(Zombie), "aborted"
		case l.output:
			fill, stroke, tc = Hex(Tint(ClientColor(c.Producer), 0.72)), ClientHex(c.Producer), Hex(Ink)
			if c.Txn == sim.TxnCommitted {
				kind = "committed"
			} else {
				kind = "written"
			}
		case hasCommitted && i < committed:
			fill, tc, kind = "#d5ead5", Hex(Ink), "consumed-committed"
		case i < pos:
			fill, tc, kind = "#fff0bf", Hex(Ink), "fetched"
		}
		s.b.WriteString("<rect")
		s.attrs("class", "cell "+kind, "data-offset", strconv.Itoa(i), "x", num(cxx), "y", num(cy), "width", num(l.cellW),
			"height", num(cellH), "rx", "2", "fill", fill, "stroke", stroke, "stroke-width", "1", "stroke-dasharray", dash)
		s.b.WriteString("><title>" + esc(cellTitle(l.tp, c)) + "</title></rect>\n")
		if l.output && c.IsData() && c.Producer != "" {
			s.rect(cxx+1, cy+cellH-4, l.cellW-2, 3, ClientHex(c.Producer), "", 0, "")
		}
		if l.nth[i] > 1 {
			// A duplicate: a red bar along the top, as the ✗ marks an aborted one.
			s.rect(cxx+1, cy+1, l.cellW-2, 3, Hex(Zombie), "", 0, "duplicate")
		}
		s.text(cxx+l.cellW/2, cy+14.5, cellText(c, l.nth[i]), textStyle{size: 9.5, mono: true, color: tc, anchor: "middle", bold: !c.IsData()})
	}
	if hw == 0 {
		s.text(cx+6, y+15, "empty", textStyle{size: 10.5, italic: true, color: Hex(Faint)})
	}
	// HW, and the LSO when it is not the HW, above the row they fall in.
	hx, hy := at(hw)
	hx -= cellGap / 2
	if hw == 0 {
		hx = cx - cellGap/2
	}
	label := "HW " + strconv.Itoa(hw)
	if l.output && lso == hw {
		label = "HW = LSO " + strconv.Itoa(hw)
	}
	s.line(hx, hy-6, hx, hy+cellH+3, Hex(Ink), 2, "", "hw")
	s.text(hx+3, hy-8, label, textStyle{size: 10, bold: true, color: Hex(Ink)})
	if lso != hw {
		lx, ly := at(lso)
		lx -= cellGap / 2
		s.line(lx, ly-6, lx, ly+cellH+3, Hex(Zombie), 2, "", "lso")
		s.text(lx-3, ly-8, "LSO "+strconv.Itoa(lso), textStyle{size: 10, bold: true, color: Hex(Zombie), anchor: "end"})
	}
	// The group's committed offset, under the row: the next record a new owner reads.
	if hasCommitted {
		px, py := at(committed)
		px -= cellGap / 2
		s.polygon(Hex(Committed), px, py+cellH+2, px-5, py+cellH+10, px+5, py+cellH+10)
		s.text(px+7, py+cellH+12, "committed "+strconv.Itoa(committed), textStyle{size: 10, color: Hex(Committed), bold: true, class: "committed"})
	}
	// The consumer's fetch position, above the row, in its colour.
	if pos >= 0 && owner != nil && pos != committed {
		px, py := at(pos)
		px -= cellGap / 2
		col := ClientHex(owner.Client)
		s.polygon(col, px, py-1, px-4, py-7, px+4, py-7)
	}
	s.end()
}

func cellTitle(tp sim.TopicPartition, c sim.Cell) string {
	t := fmt.Sprintf("%s offset %d: %s", tp, c.Offset, c.Value)
	if c.Producer != "" {
		t += " by " + c.Producer
	}
	if c.PID >= 0 {
		t += fmt.Sprintf(" (pid %d epoch %d", c.PID, c.Epoch)
		if c.Seq >= 0 {
			t += fmt.Sprintf(" seq %d", c.Seq)
		}
		t += ")"
	}
	if c.Txn != sim.NotTransactional {
		t += ", transaction " + c.Txn.String()
	}
	return t
}

// drawWorldLegend explains the cell colours and marks.
func drawWorldLegend(s *svg, x, y float64) {
	s.group("class", "legend")
	type item struct {
		fill, stroke, dash, text, label string
		tc                              string
	}
	items := []item{
		{"#d5ead5", "#9a9a9a", "", "3", "input below the committed offset", Hex(Ink)},
		{"#fff0bf", "#9a9a9a", "", "4", "fetched, not committed", Hex(Ink)},
		{Hex(Tint(ClientColor("C1"), 0.72)), ClientHex("C1"), "", "o0.1", "invoice (colour of its producer)", Hex(Ink)},
		{"#ffffff", ClientHex("C2"), "3 2", "o2.3", "open transaction", Hex(Ink)},
		{"#f7d4d4", Hex(Zombie), "", "o2.3✗", "aborted: read_committed skips it", Hex(Zombie)},
		{Hex(Tint(ClientColor("C2"), 0.72)), ClientHex("C2"), "", "o2.3²", "second invoice of o2.3: a duplicate", Hex(Ink)},
		{Hex(Committed), Hex(Committed), "", "C", "COMMIT marker", "#ffffff"},
		{Hex(Zombie), Hex(Zombie), "", "A", "ABORT marker", "#ffffff"},
	}
	cx, cy := x, y
	for _, it := range items {
		cw := textWidth(it.text, 9.5, true) + 10
		if cw < 24 {
			cw = 24
		}
		lw := textWidth(it.label, 10.5, false)
		if cx+cw+lw+24 > x+880 {
			cx, cy = x, cy+26
		}
		s.b.WriteString("<rect")
		s.attrs("x", num(cx), "y", num(cy), "width", num(cw), "height", "18", "rx", "2", "fill", it.fill, "stroke", it.stroke, "stroke-dasharray", it.dash)
		s.b.WriteString("/>\n")
		s.text(cx+cw/2, cy+13, it.text, textStyle{size: 9.5, mono: true, anchor: "middle", color: it.tc})
		s.text(cx+cw+5, cy+13, it.label, textStyle{size: 10.5, color: Hex(Ink)})
		cx += cw + lw + 22
	}
	cy += 26
	cx = x
	s.polygon(Hex(Committed), cx+6, cy+4, cx+1, cy+12, cx+11, cy+12)
	s.text(cx+16, cy+12, "the group's committed offset (where a new owner starts)", textStyle{size: 10.5, color: Hex(Ink)})
	cx += 330
	s.line(cx+4, cy, cx+4, cy+14, Hex(Ink), 2, "", "")
	s.text(cx+10, cy+12, "high watermark", textStyle{size: 10.5, color: Hex(Ink)})
	cx += 110
	s.line(cx+4, cy, cx+4, cy+14, Hex(Zombie), 2, "", "")
	s.text(cx+10, cy+12, "last stable offset", textStyle{size: 10.5, color: Hex(Ink)})
	cx += 120
	s.polygon(ClientHex("C1"), cx+5, cy+12, cx+1, cy+5, cx+9, cy+5)
	s.text(cx+14, cy+12, "fetch position", textStyle{size: 10.5, color: Hex(Ink)})
	cx += 100
	s.rect(cx, cy+1, 26, 13, Hex(Paused), "", 0, "", "rx", "3")
	s.text(cx+32, cy+12, "paused partition", textStyle{size: 10.5, color: Hex(Ink)})
	s.end()
}
