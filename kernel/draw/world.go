package draw

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/digits"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/kernel/wallclock"
	"github.com/kgrepl/kgrepl/sim"
)

// WorldOptions tune the world diagram.
type WorldOptions struct {
	// Branch is named in the title when it is not "" or "main".
	Branch string
	// Title replaces the title when not "".
	Title string
	// Shared, when set, is the layout the frames of an animation share:
	// each part is given at least the room it takes in any frame, so what
	// does not change stays in place (and is drawn once).
	Shared *Layout
	// Logs, when not nil, are the partitions whose logs are drawn, in this
	// order (at most MaxLogs); nil draws DiagramLogs' pick. Each log draws
	// at most its last cells (LogRows), saying how many it leaves out.
	Logs []sim.TopicPartition
	// LogsNote, when the logs drawn are not all the world's, is the line
	// above them that says which are drawn; "" says it with counts alone.
	LogsNote string
	// LogRows is the rows of cells the logs share (0: LogRowsBudget).
	LogRows int
}

// MaxMemberRows bounds the member processes a world diagram draws in its
// left column (about 90 px each): past it the first of them are drawn and
// a line under them says how many are not (members lists every one).
const MaxMemberRows = 100

// LogsNote is the line a diagram of drawn of all partitions' logs shows
// above them ("" when every log is drawn); picked spells which (may be "").
func LogsNote(drawn, all int, picked string) string {
	if drawn >= all {
		return ""
	}
	t := fmt.Sprintf("%s of %s partitions' logs drawn", digits.Int(drawn), digits.Int(all))
	if picked != "" {
		t += ": " + picked
	}
	return t + "; --partitions picks others"
}

// Layout is the room a world diagram gave its parts: the wire between the
// members and B1, each member row's height, B1's lines, each log's cell
// width and rows, and the whole height.
type Layout struct {
	Wire    float64
	BrokerW float64            // B1's box
	RowH    map[string]float64 // by client/process
	Lines   int
	CellW   map[string]float64 // by partition
	LogRows map[string]int
	First   map[string]int // the first cell a log draws (a long log's last cells)
	Height  float64
}

// Add makes l the room both l and o need.
func (l *Layout) Add(o *Layout) {
	if l.RowH == nil {
		l.RowH, l.CellW, l.LogRows, l.First = map[string]float64{}, map[string]float64{}, map[string]int{}, map[string]int{}
	}
	l.Wire, l.Lines, l.Height = math.Max(l.Wire, o.Wire), max(l.Lines, o.Lines), math.Max(l.Height, o.Height)
	l.BrokerW = math.Max(l.BrokerW, o.BrokerW)
	for k, v := range o.RowH {
		l.RowH[k] = math.Max(l.RowH[k], v)
	}
	for k, v := range o.CellW {
		l.CellW[k] = math.Max(l.CellW[k], v)
	}
	for k, v := range o.LogRows {
		l.LogRows[k] = max(l.LogRows[k], v)
	}
	// Logs only grow: the last frame's first cell is the latest, and every
	// frame draws from it, so that the cells stay in place (drawn once).
	for k, v := range o.First {
		l.First[k] = max(l.First[k], v)
	}
}

// Layout is the room this world diagram gave its parts.
func (p *Picture) Layout() *Layout { return p.layout }

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

// MaxWorldWidth is the widest a world diagram is drawn (CSS pixels), so it
// fits a blog's column: B1's lines wrap or are cut, the members' list is
// laid out in columns and the logs in rows that fit.
const MaxWorldWidth = 1400.0

// maxBrokerW is the widest B1's box is drawn: what is left of
// MaxWorldWidth next to the members and the least wire.
const maxBrokerW = MaxWorldWidth - 2*margin - memberW - wireW

// World draws the world now, as the seed's page does: the members on the
// left with their state and partitions, the packets in flight in the
// middle, and B1 on the right with the group coordinator, the transaction
// coordinator and every partition log as cells.
func World(w *sim.World, opt WorldOptions) *Picture {
	sh := opt.Shared
	if sh == nil {
		sh = &Layout{}
	}
	lay := &Layout{RowH: map[string]float64{}, CellW: map[string]float64{}, LogRows: map[string]int{}, First: map[string]int{}}
	rows := memberRows(w)
	// A big group draws its first MaxMemberRows processes; the packets of
	// the others are counted, not drawn.
	var more, morePackets int
	if len(rows) > MaxMemberRows {
		more, rows = len(rows)-MaxMemberRows, rows[:MaxMemberRows]
	}
	var self []*sim.Packet // B1 to B1 (WriteTxnMarkers)
	var orphans []*sim.Packet
	for _, p := range w.InFlight() {
		switch {
		case p.From == sim.Broker && p.To == sim.Broker:
			self = append(self, p)
		default:
			if r := rowFor(rows, p); r != nil {
				r.packets = append(r.packets, p)
			} else if more > 0 && w.Member(packetClient(p)) != nil {
				morePackets++
			} else {
				orphans = append(orphans, p)
			}
		}
	}
	logs, logsNote := opt.Logs, opt.LogsNote
	if logs == nil {
		logs = DiagramLogs(w)
	}
	if all := len(w.Layout().Inputs()) + len(w.Layout().Outputs()); logsNote == "" {
		logsNote = LogsNote(len(logs), all, "")
	}
	y := margin + headerH
	for _, r := range rows {
		r.y = y
		r.h = memberMinH
		if need := 16 + packetStep*float64(len(r.packets)); need > r.h {
			r.h = need
		}
		key := r.m.Client + "/" + strconv.Itoa(r.m.Inc)
		r.h = math.Max(r.h, sh.RowH[key])
		lay.RowH[key] = r.h
		y += r.h + memberGap
	}
	membersBottom := y
	moreNote := ""
	if more > 0 {
		moreNote = fmt.Sprintf("%s more member processes not drawn (members lists them)", digits.Int(more))
		if morePackets > 0 {
			moreNote = fmt.Sprintf("%s more member processes and their %s packets in flight not drawn (members lists them)", digits.Int(more), digits.Int(morePackets))
		}
		membersBottom += packetStep
	}

	budget := opt.LogRows
	if budget <= 0 {
		budget = LogRowsBudget
	}
	b := newBrokerLayout(w, self, sh, logs, logsNote, budget)
	b.width = math.Max(b.width, sh.BrokerW)
	lay.Lines, lay.CellW, lay.LogRows, lay.BrokerW = len(b.lines), b.cellW, b.logRows, b.width
	for _, l := range b.logs {
		lay.First[l.tp.String()] = l.first
	}
	wire := math.Max(wireW, sh.Wire)
	for _, r := range rows {
		for _, p := range r.packets {
			wire = math.Max(wire, textWidth(fullPacketLabel(p), 9.5, false)+28)
		}
	}
	wire = math.Min(wire, math.Max(maxWireW, sh.Wire))
	// Within the width left next to B1's box (the frames of an animation
	// share one box width, so one wire).
	wire = math.Max(wireW, math.Min(wire, MaxWorldWidth-2*margin-memberW-b.width))
	lay.Wire = wire
	bx := margin + memberW + wire
	width := bx + b.width + margin
	height := math.Max(margin+headerH+b.height, sh.Height)
	if membersBottom+float64(len(orphans))*packetStep > height {
		height = membersBottom + float64(len(orphans))*packetStep
	}
	lay.Height = height
	legendY := height + 8
	height = legendY + legendH + margin
	if width < 900 {
		width = 900
	}

	// In real time the tick is named with its time: 00:00:45.355 (tick 9071).
	at := wallclock.Of(w).TickAt(w.Tick)
	title := fmt.Sprintf("group %s · %s · %s · generation %d", w.Group.ID(), at, w.Group.State(), w.Group.Epoch())
	if w.Group.Type() == sim.ConsumerGroup {
		title = fmt.Sprintf("group %s · %s · %s · group epoch %d", w.Group.ID(), at, w.Group.State(), w.Group.Epoch())
	}
	if opt.Branch != "" && opt.Branch != "main" {
		title = "branch " + opt.Branch + " · " + title
	}
	if opt.Title != "" {
		title = opt.Title
	}
	pic, s := newPicture(width, height, "kgrepl-diagram", title)
	cutLogs := 0
	for _, l := range b.logs {
		if l.first > 0 {
			cutLogs++
		}
	}
	cellsNote := ""
	if cutLogs > 0 {
		cellsNote = fmt.Sprintf("%s of the logs drawn from a later cell (each says how many earlier cells it leaves out)", digits.Int(cutLogs))
	}
	for _, t := range []string{logsNote, cellsNote, moreNote} {
		if t != "" && pic.Cut != "" {
			pic.Cut += "; "
		}
		pic.Cut += t
	}
	// Animate reads how far a packet's dot travels, and where B1 stands.
	pic.run, pic.wire, pic.layout = packetRun(margin+memberW, bx), wire, lay
	s.text(margin, margin+16, fitWidth(title, textStyle{size: 17, bold: true}, width-2*margin), textStyle{size: 17, bold: true, color: Hex(Ink)})
	s.text(margin, margin+34, fitWidth(subtitle(w), textStyle{size: 11.5}, width-2*margin), textStyle{size: 11.5, color: Hex(Faint)})

	// The group's leader, read once (Describe lists every member with its
	// assignment: once a member made a diagram of 100 members cost 190 MB).
	leader := w.Group.Describe().Leader
	for _, r := range rows {
		drawMember(s, w, r, leader)
		drawPackets(s, r, margin+memberW, bx)
	}
	if moreNote != "" {
		s.group("class", "members-cut", "data-more", strconv.Itoa(more))
		s.text(margin, membersBottom-packetStep+6, fitWidth(moreNote, textStyle{size: 11, bold: true}, memberW+wire-16), textStyle{size: 11, bold: true, color: Hex(Ink)})
		s.end()
	}
	for i, p := range orphans {
		yy := membersBottom + float64(i)*packetStep + 10
		s.group("class", "packet-label")
		s.text(margin, yy, fmt.Sprintf("%s → %s: %s", p.From, p.To, packetLabel(p)), textStyle{size: 10.5, color: Hex(Faint)})
		s.end()
	}
	b.draw(s, w, bx, margin+headerH)
	drawWorldLegend(s, margin, legendY)
	return pic
}

// subtitle sums up the settings that shape what the picture shows.
func subtitle(w *sim.World) string {
	c := w.Cfg.Client
	// A consumer group's assignor runs on the coordinator and its session
	// timeout is the broker's: the client-side settings would name what
	// does not apply.
	// The settings are in the world's unit: ticks, or in real time
	// milliseconds, written as durations.
	clk := wallclock.Of(w)
	setting := func(v int) string {
		if clk.Real() {
			return wallclock.Duration(int64(v))
		}
		return strconv.Itoa(v)
	}
	assignor, session := "assignor "+c.Assignor, "session.timeout "+setting(c.SessionTimeout)
	if d := w.Group.Describe(); d.Type == sim.ConsumerGroup {
		assignor = "group.protocol consumer · assignor " + d.Assignor
		session = "group.consumer.session.timeout " + setting(w.Cfg.ConsumerSessionTimeout)
	}
	meter := fmt.Sprintf("pause meter %d", w.Meter.Total)
	if clk.Real() {
		meter = fmt.Sprintf("pause meter %s (partition × seconds)", clk.Seconds(w.Meter.Total))
	}
	parts := []string{
		assignor,
		"commit " + string(c.Commit),
		"producer " + string(c.Producer()),
		"reader " + w.Cfg.Isolation,
		fmt.Sprintf("%s · max.poll.interval %s", session, setting(c.MaxPollInterval)),
		meter,
	}
	return strings.Join(parts, " · ")
}

// memberRows lists the processes to draw: each client's newest process,
// and any older process still running (a zombie).
func memberRows(w *sim.World) []*memberRow {
	var rows []*memberRow
	for _, c := range natural.Sorted(w.Clients()) {
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

// packetClient is the client end of a packet between a client and B1.
func packetClient(p *sim.Packet) string {
	if p.From == sim.Broker {
		return p.To
	}
	return p.From
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
	tp, err := w.Layout().ParsePartition(rec[:i])
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
	return m.MemberID == "" || !w.Group.HasMember(m.MemberID)
}

// stopped says how a process that no longer runs ended: "crashed",
// "closed", "stopped for the restart" (sim.Member.Ended), or the fatal
// error that stopped it, as members says it ("stopped: ...").
func stopped(m *sim.Member) string {
	switch {
	case m.StoppedBy != "":
		return "stopped: " + m.StoppedBy
	case m.Ended == "":
		return "closed"
	}
	return m.Ended
}

func drawMember(s *pen, w *sim.World, r *memberRow, leader string) {
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
	// The box's parts are groups of their own, so that an animation draws
	// what stays the same once and only the lines that change per tick.
	part := func(class string) {
		s.group("class", class, "data-client", m.Client, "data-process", strconv.Itoa(m.Inc))
	}
	part("member")
	s.rect(x, y, memberW, r.h, ink{fill: fill, stroke: stroke, width: 1.5, dash: dash, rx: 6})
	s.rect(x, y, 6, r.h, ink{fill: Hex(col)})
	nameCol := Hex(col)
	if !m.Alive {
		nameCol = Hex(Faint)
	}
	s.text(x+14, y+19, m.Client, textStyle{size: 16, bold: true, color: nameCol})
	s.end()
	id := m.MemberID
	if id == "" {
		id = "no member id"
	}
	var badges []string
	if m.Alive && m.MemberID != "" && leader == m.MemberID {
		badges = append(badges, "leader")
	}
	if m.Static() {
		badges = append(badges, "static "+m.Cfg.InstanceID)
	}
	info := fmt.Sprintf("%s · process %d", id, m.Inc)
	if len(badges) > 0 {
		info += " · " + strings.Join(badges, " · ")
	}
	part("member-info")
	nameW := measure(m.Client, textStyle{size: 16, bold: true})
	s.text(x+14+nameW+8, y+18, fitWidth(info, textStyle{size: 11}, memberW-22-nameW-8), textStyle{size: 11, color: Hex(Ink)})
	s.end()

	// A consumer group's members (KIP-848) carry a member epoch where a
	// classic member has a generation, and join with a heartbeat.
	gen, joinReq := "gen", "JoinGroup"
	if w.Group.Type() == sim.ConsumerGroup {
		gen, joinReq = "epoch", "heartbeat"
	}
	var state string
	switch {
	case !m.Alive:
		state = stopped(m)
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
	part("member-state")
	s.text(x+14, y+36, fitWidth(state, textStyle{size: 11}, memberW-22), textStyle{size: 11, color: stCol})
	s.end()

	// Owned partitions as chips; a paused one is grey.
	paused := map[sim.TopicPartition]bool{}
	for _, tp := range w.PausedPartitions() {
		paused[tp] = true
	}
	part("member-partitions")
	cx := x + 14
	if len(m.Owned) == 0 {
		s.text(cx, y+55, "owns nothing", textStyle{size: 11, italic: true, color: Hex(Faint)})
	}
	for _, tp := range m.Owned {
		name := w.Layout().ShortName(tp)
		cw := measure(name, textStyle{size: 10.5, mono: true}) + 10
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
		s.group("class", "chip", "data-partition", tp.String())
		s.rect(cx, y+43, cw, 16, ink{fill: f, stroke: edge, width: 1, rx: 3})
		s.text(cx+cw/2, y+55, name, textStyle{size: 10.5, mono: true, color: tc, anchor: "middle"})
		s.end()
		cx += cw + 4
	}
	s.end()

	// Offsets go into the transaction with a transactional producer, whatever the commit setting says.
	prod := "commit " + string(m.Cfg.Commit) + " · producer " + string(m.Cfg.Producer())
	if id := m.Cfg.TransactionalID; id != "" {
		prod = id
		if e := w.Txn.Entry(id); e != nil {
			prod += fmt.Sprintf(" · pid %d · epoch %d · %s", e.PID, e.Epoch, e.State)
		}
	}
	part("member-producer")
	s.text(x+14, y+73, fitWidth(prod, textStyle{size: 10.5}, memberW-22), textStyle{size: 10.5, color: Hex(Faint)})
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

// Wire is the width a world diagram gave the wire between the members and
// B1 (0 for another picture); see WorldOptions.Wire.
func (p *Picture) Wire() float64 { return p.wire }

// packetRun is how far a packet's dot travels: from its sender's end of
// the arrow to the other (the animation moves it by this much).
func packetRun(x0, x1 float64) float64 { return x1 - x0 - 16 }

// drawPackets draws a member's packets in flight as arrows between x0 and
// x1 with their labels, cut to fit before B1's box, and a dot at the
// sender's end (an animated diagram moves it to the receiver).
func drawPackets(s *pen, r *memberRow, x0, x1 float64) {
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
		// The arrow and its label are parts of their own: in an animation
		// an arrow in the same place in other ticks is drawn once.
		s.group("class", "packet", "data-from", p.From, "data-to", p.To)
		s.line(a, y+3, b, y+3, col, 1.4, "")
		s.arrowHead(a, y+3, b, y+3, col)
		s.group("class", "pkt-dot "+dir)
		s.circle(a, y+3, 3.5, ink{fill: col, stroke: "#ffffff", width: 1})
		s.end()
		s.end()
		s.group("class", "packet-label", "data-type", string(p.Type))
		s.text(x0+12, y, fitWidth(fullPacketLabel(p), textStyle{size: 9.5}, x1-x0-24), textStyle{size: 9.5, color: col})
		s.end()
	}
}

// fitWidth cuts s with an ellipsis so it is at most width wide in a style's font.
func fitWidth(s string, st textStyle, width float64) string {
	if measure(s, st) <= width {
		return s
	}
	r := []rune(s)
	lo, hi := 0, len(r) // the longest prefix that fits with the ellipsis
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if measure(string(r[:mid])+"…", st) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return string(r[:max(lo, 1)]) + "…"
}

// drawWorldLegend explains the cell colours and marks.
func drawWorldLegend(s *pen, x, y float64) {
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
	label := textStyle{size: 10.5, color: Hex(Ink)}
	cx, cy := x, y
	for _, it := range items {
		cw := math.Max(24, measure(it.text, cellStyle)+10)
		lw := measure(it.label, label)
		if cx+cw+lw+24 > x+880 {
			cx, cy = x, cy+26
		}
		s.rect(cx, cy, cw, 18, ink{fill: it.fill, stroke: it.stroke, width: 1, dash: it.dash, rx: 2})
		st := cellStyle
		st.anchor, st.color = "middle", it.tc
		s.text(cx+cw/2, cy+13, it.text, st)
		s.text(cx+cw+5, cy+13, it.label, label)
		cx += cw + lw + 22
	}
	cy += 26
	cx = x
	s.polygon(Hex(Committed), cx+6, cy+4, cx+1, cy+12, cx+11, cy+12)
	s.text(cx+16, cy+12, "the group's committed offset (where a new owner starts)", label)
	cx += 330
	s.line(cx+4, cy, cx+4, cy+14, Hex(Ink), 2, "")
	s.text(cx+10, cy+12, "high watermark", label)
	cx += 110
	s.line(cx+4, cy, cx+4, cy+14, Hex(Zombie), 2, "")
	s.text(cx+10, cy+12, "last stable offset", label)
	cx += 120
	s.polygon(ClientHex("C1"), cx+5, cy+12, cx+1, cy+5, cx+9, cy+5)
	s.text(cx+14, cy+12, "fetch position", label)
	cx += 100
	s.rect(cx, cy+1, 26, 13, ink{fill: Hex(Paused), rx: 3})
	s.text(cx+32, cy+12, "paused partition", label)
	s.end()
}
