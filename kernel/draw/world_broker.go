package draw

// The broker's half of the world picture: the coordinator's members, and
// each partition's log as a row of cells.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/digits"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/kernel/wallclock"
	"github.com/kgrepl/kgrepl/sim"
)

// brokerLayout measures B1's box before drawing it.
type brokerLayout struct {
	width, height float64
	lines         []brokerLine
	logs          []logLayout
	logsTop       float64
	cellW         map[string]float64 // by partition, for Layout
	logRows       map[string]int
}

// brokerLine is one line of text in B1's box, or one row of a grid
// (cols, each colW wide, after lead): the members' list when it does not
// fit one line.
type brokerLine struct {
	text  string
	color string
	bold  bool
	size  float64
	cols  []string
	colW  float64
	lead  float64 // where the grid starts, from the box's text margin
}

type logLayout struct {
	tp     sim.TopicPartition
	output bool
	cellW  float64
	perRow int
	rows   int
	y      float64     // top of the first row, relative to logsTop
	nth    map[int]int // offset → the invoice's number for its input record, from 2 (duplicates)
	first  int         // the first cell drawn: a long log draws its last cells (LogRowsBudget)
}

func newBrokerLayout(w *sim.World, self []*sim.Packet, sh *Layout, logs []sim.TopicPartition, note string, budget int) *brokerLayout {
	b := &brokerLayout{cellW: map[string]float64{}, logRows: map[string]int{}}
	g := w.Group.Describe()
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
	gms := g.Members
	sort.SliceStable(gms, func(i, j int) bool { return natural.Less(gms[i].MemberID, gms[j].MemberID) })
	for _, gm := range gms {
		t := gm.MemberID + " " + w.Layout().PartList(gm.Assignment)
		if (g.State == sim.PreparingRebalance) && gm.Joined {
			t += " (joined)"
		}
		if consumer {
			// Each member's epoch, and where it is going while it reconciles.
			cur, target := w.Layout().PartList(gm.Assignment), w.Layout().PartList(gm.Target) // sorted: equal sets, equal text
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
	b.lines = append(b.lines, memberLines(ms)...)
	var pend []string
	for _, tp := range w.Layout().Inputs() {
		if w.Group.Offsets.HasPending(tp) {
			pend = append(pend, w.Layout().ShortName(tp))
		}
	}
	if len(pend) > 0 {
		b.lines = append(b.lines, brokerLine{text: "pending transactional offsets: " + strings.Join(pend, " ") + " (OffsetFetch answers UNSTABLE_OFFSET_COMMIT)", size: 11, color: Hex(Zombie)})
	}
	entries := w.Txn.Entries()
	for k, e := range entries {
		if k == maxListLines-1 && len(entries) > maxListLines {
			b.lines = append(b.lines, brokerLine{text: fmt.Sprintf("… %s more transactional ids (txn lists them)", digits.Int(len(entries)-k)), size: 11, color: Hex(Ink)})
			break
		}
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
			if clk := wallclock.Of(w); clk.Real() {
				t += fmt.Sprintf(" · open since %s (timeout %s)", clk.TickAt(e.Start), clk.Dur(e.Timeout))
			} else {
				t += fmt.Sprintf(" · open since tick %d (timeout %d)", e.Start, e.Timeout)
			}
		}
		b.lines = append(b.lines, brokerLine{text: t, size: 11, color: ClientHex(strings.TrimPrefix(e.TransactionalID, "tx-"))})
	}
	for k, p := range self {
		if k == maxListLines-1 && len(self) > maxListLines {
			b.lines = append(b.lines, brokerLine{text: fmt.Sprintf("… %s more B1 to B1 packets in flight", digits.Int(len(self)-k)), size: 11, color: Hex(Broker)})
			break
		}
		b.lines = append(b.lines, brokerLine{text: "in flight ↻ " + string(p.Type) + " " + p.Summary, size: 11, color: Hex(Broker)})
	}
	if note != "" {
		b.lines = append(b.lines, brokerLine{text: note, size: 11, bold: true, color: Hex(Ink)})
	}
	textW := 0.0
	for i, l := range b.lines {
		st := textStyle{size: l.size, bold: l.bold}
		if l.cols != nil {
			textW = math.Max(textW, l.lead+float64(len(l.cols))*l.colW)
			continue
		}
		b.lines[i].text = fitWidth(l.text, st, maxBrokerW-28)
		textW = math.Max(textW, measure(b.lines[i].text, st))
	}
	b.logsTop = 14 + 18*float64(max(len(b.lines), sh.Lines)) + 12
	y := 0.0
	cellsW := 0.0
	// Each log draws at most rows rows: its last cells (see LogRowsBudget).
	rows := logRows(len(logs), budget)
	from := map[sim.TopicPartition]int{} // the first cell that may be drawn, by log
	for _, tp := range logs {
		from[tp] = max(w.Log(tp).Start(), w.Log(tp).HW()-rows*maxPerRow(w, tp)) // never below the log's start (history.ms)
	}
	nth := invoiceNumbersFrom(w, from)
	for _, tp := range logs {
		l := logLayout{tp: tp, output: !isInput(w, tp)}
		l.cellW, l.perRow = 24, maxPerRow(w, tp)
		l.nth = nth[tp]
		for i, c := range w.Log(tp).Cells.From(from[tp]) {
			if cw := measure(cellText(c, l.nth[i]), cellStyle) + 10; cw > l.cellW {
				l.cellW = cw
			}
		}
		// As many cells a row as B1's box has room for.
		room := maxBrokerW - 28 - logLabelW - logEndW
		l.cellW = math.Min(l.cellW, room)
		l.cellW = math.Max(l.cellW, sh.CellW[tp.String()])
		b.cellW[tp.String()] = l.cellW
		l.perRow = max(1, min(l.perRow, int((room+cellGap)/(l.cellW+cellGap))))
		hw := w.Log(tp).HW()
		// An animation's frames draw a log from one first cell (Layout.First).
		l.first = min(hw, max(hw-rows*l.perRow, sh.First[tp.String()], w.Log(tp).Start()))
		n := hw - l.first
		l.rows = (n + l.perRow - 1) / l.perRow
		if l.rows == 0 {
			l.rows = 1
		}
		l.rows = max(l.rows, sh.LogRows[tp.String()])
		b.logRows[tp.String()] = l.rows
		y += 14 // room for the HW / LSO labels above
		l.y = y
		y += float64(l.rows)*(cellH+logRowGap) - 4
		cols := l.perRow
		if n < cols {
			cols = n
		}
		if rw := float64(cols)*(l.cellW+cellGap) + logEndW; rw > cellsW {
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

func (b *brokerLayout) draw(s *pen, w *sim.World, x, y float64) {
	s.group("class", "broker", "data-node", sim.Broker)
	s.rect(x, y, b.width, b.height, ink{fill: "#fafafa", stroke: Hex(Broker), width: 1.5, rx: 8})
	s.end()
	ly := y + 20
	for i, l := range b.lines {
		st := textStyle{size: l.size, bold: l.bold, color: l.color}
		s.group("class", "broker-line", "data-line", strconv.Itoa(i))
		if l.cols != nil {
			if l.text != "" {
				s.text(x+14, ly, l.text, st)
			}
			for k, c := range l.cols {
				s.text(x+14+l.lead+float64(k)*l.colW, ly, c, st)
			}
		} else {
			s.text(x+14, ly, l.text, st)
		}
		s.end()
		ly += 18
	}
	s.line(x+10, y+b.logsTop-8, x+b.width-10, y+b.logsTop-8, "#dddddd", 1, "")
	owners := consumers(w)
	for _, l := range b.logs {
		drawLog(s, w, l, owners[l.tp], x+14, y+b.logsTop+l.y)
	}
}

// memberLines is B1's list of members: one line when it fits, else a
// grid of columns under and after "members:", as many columns as fit.
func memberLines(ms []string) []brokerLine {
	const size = 11
	st := textStyle{size: size}
	one := "members: " + strings.Join(ms, " · ")
	room := maxBrokerW - 28
	if measure(one, st) <= room {
		return []brokerLine{{text: one, size: size, color: Hex(Ink)}}
	}
	lead := measure("members: ", st)
	colW := 0.0
	for _, m := range ms {
		colW = math.Max(colW, measure(m, st)+16)
	}
	colW = math.Min(colW, room-lead)
	cols := max(1, int((room-lead)/colW))
	var out []brokerLine
	for i := 0; i < len(ms); i += cols {
		var row []string
		for _, m := range ms[i:min(i+cols, len(ms))] {
			row = append(row, fitWidth(m, st, colW-16))
		}
		l := brokerLine{size: size, color: Hex(Ink), cols: row, colW: colW, lead: lead}
		if i == 0 {
			l.text = "members:"
		}
		if len(out) == maxListLines-1 && i+cols < len(ms) {
			return append(out, brokerLine{text: fmt.Sprintf("… %s more members (describe group --members lists them)", digits.Int(len(ms)-i)),
				size: size, color: Hex(Ink)})
		}
		out = append(out, l)
	}
	return out
}

// maxListLines bounds each list in B1's box (its members, the
// transactional ids): a group of thousands lists its first and says how
// many more there are.
const maxListLines = 25

// consumers is, by partition, the live group member consuming it now:
// the first of w.Clients() that is alive, no zombie, and owns it. Built
// once a diagram (a lookup a log asked IsZombie of every client, and so the
// coordinator's Describe: 10,000 times for 100 logs of 100 members).
func consumers(w *sim.World) map[sim.TopicPartition]*sim.Member {
	out := map[sim.TopicPartition]*sim.Member{}
	for _, c := range w.Clients() {
		m := w.Member(c)
		if m == nil || !m.Alive || IsZombie(w, m) {
			continue
		}
		for _, o := range m.Owned {
			if _, ok := out[o]; !ok {
				out[o] = m
			}
		}
	}
	return out
}

// cellStyle is the font of a log cell's text.
var cellStyle = textStyle{size: 9.5, mono: true}

// logEndW is the room right of a row of cells (for the HW and LSO labels).
const logEndW = 70.0

func drawLog(s *pen, w *sim.World, l logLayout, owner *sim.Member, x, y float64) {
	lg := w.Log(l.tp)
	hw, lso := lg.HW(), lg.LSO()
	committed, hasCommitted := -1, false
	if rec, ok := w.Group.Offsets.Committed(l.tp); ok && !l.output {
		committed, hasCommitted = rec.Offset, true
	}
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
	tpName := l.tp.String()
	s.group("class", "log", "data-partition", tpName, "data-hw", strconv.Itoa(hw), "data-lso", strconv.Itoa(lso),
		"data-committed", committedAttr)
	s.text(x, y+15, tpName, textStyle{size: 12, bold: true, color: Hex(Ink)})
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
	if hw == 0 {
		s.text(x+logLabelW+6, y+15, "empty", textStyle{size: 10.5, italic: true, color: Hex(Faint)})
	}
	s.end()
	cx := x + logLabelW
	// A long log draws its last cells from l.first: a mark under its name
	// says how many earlier cells it leaves out, a dashed edge opens its
	// first row, and a pointer to an earlier offset (committed, LSO, the
	// fetch position) stands at the edge with ← before its label.
	if l.first > 0 {
		s.group("class", "log-cut", "data-partition", tpName, "data-first", strconv.Itoa(l.first))
		s.text(x, y+43, fitWidth(digits.Int(l.first)+" earlier", textStyle{size: 10, italic: true}, logLabelW-6),
			textStyle{size: 10, italic: true, color: Hex(Faint)})
		s.line(cx-cellGap/2, y-3, cx-cellGap/2, y+cellH+3, Hex(Faint), 1.2, "3 2")
		s.end()
	}
	at := func(off int) (float64, float64) {
		off = max(off, l.first) - l.first
		row := off / l.perRow
		col := off % l.perRow
		if off == hw-l.first && off > 0 && col == 0 {
			row, col = row-1, l.perRow // the end of the log sits after the last cell
		}
		return cx + float64(col)*(l.cellW+cellGap), y + float64(row)*(cellH+logRowGap)
	}
	earlier := func(off int, label string) string {
		if off < l.first {
			return "← " + label
		}
		return label
	}
	for i, c := range lg.Cells.From(l.first) {
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
		s.group("class", "cell "+kind, "data-partition", tpName, "data-offset", strconv.Itoa(i), "title", cellTitle(l.tp, c))
		s.rect(cxx, cy, l.cellW, cellH, ink{fill: fill, stroke: stroke, width: 1, dash: dash, rx: 2})
		if l.output && c.IsData() && c.Producer != "" {
			s.rect(cxx+1, cy+cellH-4, l.cellW-2, 3, ink{fill: ClientHex(c.Producer)})
		}
		if l.nth[i] > 1 {
			// A duplicate: a red bar along the top, as the ✗ marks an aborted one.
			s.group("class", "duplicate")
			s.rect(cxx+1, cy+1, l.cellW-2, 3, ink{fill: Hex(Zombie)})
			s.end()
		}
		st := cellStyle
		st.color, st.anchor, st.bold = tc, "middle", !c.IsData()
		s.text(cxx+l.cellW/2, cy+14.5, fitWidth(cellText(c, l.nth[i]), st, l.cellW-4), st)
		s.end()
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
	s.group("class", "hw", "data-partition", tpName)
	s.line(hx, hy-6, hx, hy+cellH+3, Hex(Ink), 2, "")
	s.text(hx+3, hy-8, label, textStyle{size: 10, bold: true, color: Hex(Ink)})
	s.end()
	if lso != hw {
		lx, ly := at(lso)
		lx -= cellGap / 2
		s.group("class", "lso", "data-partition", tpName)
		s.line(lx, ly-6, lx, ly+cellH+3, Hex(Zombie), 2, "")
		s.text(lx-3, ly-8, earlier(lso, "LSO "+strconv.Itoa(lso)), textStyle{size: 10, bold: true, color: Hex(Zombie), anchor: "end"})
		s.end()
	}
	// The group's committed offset, under the row: the next record a new owner reads.
	if hasCommitted {
		px, py := at(committed)
		px -= cellGap / 2
		s.group("class", "committed", "data-partition", tpName)
		s.polygon(Hex(Committed), px, py+cellH+2, px-5, py+cellH+10, px+5, py+cellH+10)
		s.text(px+7, py+cellH+12, earlier(committed, "committed "+strconv.Itoa(committed)), textStyle{size: 10, color: Hex(Committed), bold: true})
		s.end()
	}
	// The consumer's fetch position, above the row, in its colour.
	if pos >= 0 && owner != nil && pos != committed {
		px, py := at(pos)
		px -= cellGap / 2
		s.group("class", "position", "data-partition", tpName)
		s.polygon(ClientHex(owner.Client), px, py-1, px-4, py-7, px+4, py-7)
		s.end()
	}
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

// MaxLogs bounds the logs a world diagram draws (a timeline chart draws
// at most 100 partitions likewise): past it the diagram draws those
// WorldOptions.Logs names, or DiagramLogs' pick, and says so above them.
const MaxLogs = 100

// LogRowsBudget is the rows of cells the logs of a world diagram share
// (WorldOptions.LogRows; an animation's frames share fewer): each log
// draws at most logRows of them, its last cells, so that a diagram's
// height stays within a PNG's and a PDF's bounds (at most about 17,000 px
// of logs) whatever the logs hold. The page's logs draw whole.
const LogRowsBudget = 300

// MaxCellsPerRow is the most cells a row of a log holds.
const MaxCellsPerRow = max(inputPerRow, outPerRow)

// logRows is the rows each of n logs draws at most when they share budget
// rows: 3 for 100 logs, 300 for one, and at least one.
func logRows(n, budget int) int { return max(1, budget/max(n, 1)) }

// isInput says whether tp is an input partition (else the output's).
func isInput(w *sim.World, tp sim.TopicPartition) bool {
	_, ok := w.Layout().Span(tp.Topic)
	return ok
}

// maxPerRow is the most cells a row of tp's log holds (fewer when its
// cells are wide).
func maxPerRow(w *sim.World, tp sim.TopicPartition) int {
	if isInput(w, tp) {
		return inputPerRow
	}
	return outPerRow
}

// DiagramLogs is the logs a world diagram draws when none are picked:
// every log in a world of at most MaxLogs partitions (the input partitions,
// then the output's), else the first input partitions and the first
// output ones, the output given at least a tenth of the room (its log holds
// the invoices: duplicates and aborts show there).
func DiagramLogs(w *sim.World) []sim.TopicPartition {
	ins, outs := w.Layout().Inputs(), w.Layout().Outputs()
	if len(ins)+len(outs) <= MaxLogs {
		return append(append([]sim.TopicPartition{}, ins...), outs...)
	}
	no := min(len(outs), max(MaxLogs/10, MaxLogs-len(ins)))
	ni := min(len(ins), MaxLogs-no)
	return append(append([]sim.TopicPartition{}, ins[:ni]...), outs[:no]...)
}

// DrawnCells is the most cells a world diagram of these logs sharing
// budget rows (WorldOptions.LogRows) draws now or at any earlier tick
// (logs only grow): each log's cells up to the rows it is given at their
// most a row. The kernel checks it against its limits before anything is
// drawn.
func DrawnCells(w *sim.World, logs []sim.TopicPartition, budget int) int {
	rows, n := logRows(len(logs), budget), 0
	for _, tp := range logs {
		n += min(w.Log(tp).HW(), rows*maxPerRow(w, tp))
	}
	return n
}

// invoiceNumbersFrom is InvoiceNumbers for the output cells a diagram may
// draw: those of each output log from from[tp] on (none of a log from
// has no entry for). When every log is drawn from its start it is
// InvoiceNumbers; when none is drawn (--partitions of input partitions
// alone), nothing; else it counts, in InvoiceNumbers' order, only the
// invoices of the input records those cells name, over the output logs'
// runs (sim.World.CountInvoices: per run, not per cell), so a diagram of
// a log of millions of invoices keeps a few counts and reads its runs
// once.
func invoiceNumbersFrom(w *sim.World, from map[sim.TopicPartition]int) map[sim.TopicPartition]map[int]int {
	outs := w.Layout().Outputs()
	whole, any := true, false
	for _, tp := range outs {
		f, ok := from[tp]
		if !ok || f > 0 || w.Log(tp).Start() > 0 {
			whole = false // a log not drawn, or drawn from past its start
		}
		any = any || ok
	}
	switch {
	case !any:
		return map[sim.TopicPartition]map[int]int{}
	case whole:
		return InvoiceNumbers(w)
	}
	// The cells drawn whose input record has more than one invoice (the
	// others are their record's first and only one: not numbered),
	// numbered over every output log's runs from their starts (sim.World.
	// CountInvoices), the invoices among the cells a log let go of
	// (history.ms) met before its start. Delivery says which records have
	// more than one: a world asked again reads on from where it read.
	dups := w.Delivery("read_uncommitted").Duplicated()
	var asks []sim.InvoiceAsk
	for li, tp := range outs {
		f, drawn := from[tp]
		if !drawn {
			continue
		}
		lg := w.Log(tp)
		for i := max(f, lg.Start()); i < lg.HW(); i++ {
			if src := lg.Cells.At(i).Source; lg.Cells.IsData(i) && dups[src] {
				asks = append(asks, sim.InvoiceAsk{Log: li, Cell: i, Source: src})
			}
		}
	}
	out := map[sim.TopicPartition]map[int]int{}
	if len(asks) == 0 {
		return out
	}
	w.CountInvoices(outs, asks, func(f func(li int, r sim.CellRun) bool) error {
		for li, tp := range outs {
			lg := w.Log(tp)
			for r := range lg.Cells.RunsFrom(0, lg.HW(), lg.HW()) {
				if !f(li, r) {
					return nil
				}
			}
		}
		return nil
	})
	for _, a := range asks {
		if n := a.Nth + w.ForgotInvoices(outs, a.Log, a.Source, false); n > 1 {
			tp := outs[a.Log]
			if out[tp] == nil {
				out[tp] = map[int]int{}
			}
			out[tp][a.Cell] = n
		}
	}
	return out
}
