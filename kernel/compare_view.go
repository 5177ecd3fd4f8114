package kernel

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgrepl/kgrepl/kernel/chart"
	"github.com/kgrepl/kgrepl/kernel/health"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/kernel/wallclock"
	"github.com/kgrepl/kgrepl/sim"
)

// compareView is compare's answer laid out: the table of combinations
// with the columns equal in every row taken out, the verdict, each
// member's end, and what the CSV and the chart are made of.
type compareView struct {
	keys     []string
	rows     []compareRow
	commands int    // the branch's history, as the first line counts it
	scenario string // what the history did, for the chart's title
	table    *Table // one row per combination
	same     []sameColumn
	members  *Table // one row per member, a column per combination
	clients  []string
	verdict  string
	unwell   []string // "consumer ended dead: C1..C12 stopped: ...", one per unhealthy row
	notes    []string // rows that failed
}

// allReal is true when every row ran in real time (time ms): then the
// verdict, the chart and the CSV's seconds columns read partition x ticks
// as partition x seconds, each row at its own tick.ms.
func (v *compareView) allReal() bool {
	for i := range v.rows {
		if !v.rows[i].clk.real {
			return false
		}
	}
	return len(v.rows) > 0
}

// sameColumn is a column equal in every row, shown once.
type sameColumn struct {
	Column string `json:"column"`
	Value  string `json:"value"`
}

// compareColumn is one metric column of the table; a list longer than
// clip columns (when clip > 0) is cut in the table, with how many items
// were left out (the CSV and --json have it whole).
type compareColumn struct {
	head string
	cell func(r *compareRow) string
	clip int
}

// Cells of lists are cut to these widths, so that a table of a long
// history or a big group still fits textWidth with its row names.
const (
	clipPauses  = 40 // PAUSED/REBALANCE, IDLE
	clipMembers = 36 // a member's partitions at the end
)

// clipList cuts a space-separated list (in braces or not) to at most max
// columns, saying how many items it left out: "4 4 2 … +57",
// "{t-0 t-1 … +46}".
func clipList(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	open, close := "", ""
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		open, close, s = "{", "}", s[1:len(s)-1]
	}
	items := strings.Fields(s)
	kept := 0
	width := len(open) + len(close)
	for kept < len(items) {
		more := " … +" + strconv.Itoa(len(items)-kept-1)
		w := utf8.RuneCountInString(items[kept]) + 1
		if width+w+utf8.RuneCountInString(more) > max && kept > 0 {
			break
		}
		width += w
		kept++
	}
	if kept == len(items) {
		return open + s + close
	}
	return open + strings.Join(items[:kept], " ") + " … +" + strconv.Itoa(len(items)-kept) + close
}

func compareColumns(rows []compareRow) []compareColumn {
	gen := "GEN"
	for _, r := range rows {
		if r.Protocol == string(sim.ConsumerGroup) {
			gen = "GEN/EPOCH" // a consumer group's row counts group epochs
		}
	}
	itoa := strconv.Itoa
	cause := func(c sim.Cause) func(r *compareRow) string {
		return func(r *compareRow) string { return r.clk.count(r.ByCause[c.String()], partitionTicks) }
	}
	// What the verdict weighs first, then how the rows got there.
	return []compareColumn{
		{"UNAVAILABLE", func(r *compareRow) string { return r.clk.count(r.Unavailable, partitionTicks) }, 0},
		{"PAUSE", func(r *compareRow) string { return r.clk.count(r.Pause, partitionTicks) }, 0},
		{"DUPLICATES", func(r *compareRow) string { return itoa(r.Duplicates) }, 0},
		{"LOST", func(r *compareRow) string { return itoa(r.Lost) }, 0},
		{"HEALTH", func(r *compareRow) string { return shortHealth(r.Health) }, 0},
		{"REBALANCES", func(r *compareRow) string { return itoa(r.Rebalances) }, 0},
		{"PAUSED/REBALANCE", func(r *compareRow) string { return joinInts(r.PausedPerRebalance) }, clipPauses},
		{"OWNER-DOWN", cause(sim.CauseOwnerDown), 0},
		{"UNASSIGNED", cause(sim.CauseUnassigned), 0},
		{"STOPPED", cause(sim.CauseStopped), 0},
		{"MAX-LAG", func(r *compareRow) string { return itoa(r.MaxLag.Records) }, 0},
		{"PROCESSED", func(r *compareRow) string { return itoa(r.Processed) }, 0},
		{"IDLE", func(r *compareRow) string { return dash(health.Members(r.Idle)) }, clipPauses},
		{"TICK", func(r *compareRow) string { return r.clk.count(r.Tick, aTick) }, 0},
		{gen, func(r *compareRow) string { return itoa(r.Generation) }, 0},
	}
}

// shortHealth is a row's health in a cell: ok, or what is wrong, counted
// ("dead: 12 stopped, 48 unowned" when no member runs); the words under
// the table say it whole.
func shortHealth(h health.Health) string {
	if h.OK {
		return "ok"
	}
	var parts []string
	if n := len(h.Stopped); n > 0 {
		parts = append(parts, strconv.Itoa(n)+" stopped")
	}
	if n := len(h.Unowned); n > 0 {
		parts = append(parts, strconv.Itoa(n)+" unowned")
	}
	if n := len(h.HeldByDown); n > 0 {
		parts = append(parts, strconv.Itoa(n)+" held by down")
	}
	if h.Members > 0 && len(h.Running) == 0 {
		return "dead: " + strings.Join(parts, ", ")
	}
	return strings.Join(parts, ", ")
}

func newCompareView(s *Session, keys []string, rows []compareRow) *compareView {
	v := &compareView{keys: keys, rows: rows, commands: len(s.cur.hist.inputs), scenario: s.scenario()}
	cols := compareColumns(rows)
	// A column is shown when its rows differ; with one row (or one that
	// ran), every column is shown.
	ran := 0
	for i := range rows {
		if rows[i].Error == "" {
			ran++
		}
	}
	var shown []compareColumn
	for _, c := range cols {
		first, same := "", true
		n := 0
		for i := range rows {
			if rows[i].Error != "" {
				continue
			}
			if cell := c.cell(&rows[i]); n == 0 {
				first = cell
			} else if cell != first {
				same = false
			}
			n++
		}
		if ran > 1 && same {
			v.same = append(v.same, sameColumn{c.head, first})
			continue
		}
		shown = append(shown, c)
	}
	var header []string
	for _, k := range keys {
		header = append(header, columnName(k))
	}
	for _, c := range shown {
		header = append(header, c.head)
	}
	v.table = &Table{Header: header}
	seen := map[string]bool{}
	for i := range rows {
		r := &rows[i]
		cells := append([]string{}, r.values...)
		if r.Error != "" {
			for range shown {
				cells = append(cells, "-")
			}
			v.table.Add(cells...)
			v.notes = append(v.notes, fmt.Sprintf("%s: %s", r.name(), r.Error))
			continue
		}
		for _, c := range shown {
			cells = append(cells, clipList(c.cell(r), c.clip))
		}
		v.table.Add(cells...)
		for c := range r.ends {
			seen[c] = true
		}
		if !r.Health.OK {
			if strings.HasPrefix(r.Health.Words, "dead: ") {
				v.unwell = append(v.unwell, r.name()+" ended "+r.Health.Words)
			} else {
				v.unwell = append(v.unwell, r.name()+" ended unhealthy: "+r.Health.Words)
			}
		}
	}
	for c := range seen {
		v.clients = append(v.clients, c)
	}
	natural.Sort(v.clients)
	// Each member's end: a row per member, a column per combination.
	v.members = &Table{Header: []string{"MEMBER"}}
	for i := range rows {
		v.members.Header = append(v.members.Header, rows[i].name())
	}
	for _, c := range v.clients {
		cells := []string{c}
		for i := range rows {
			e, ok := rows[i].ends[c]
			if !ok {
				e = "-"
			}
			cells = append(cells, clipList(e, clipMembers))
		}
		v.members.Add(cells...)
	}
	v.verdict = verdict(rows)
	return v
}

// text is the answer as the terminal shows it: every table within
// textWidth columns.
func (v *compareView) text() string {
	var b strings.Builder
	b.WriteString(wrapWords(fmt.Sprintf("this branch's history (%d commands) rerun under %d combination(s) of %s:", v.commands, len(v.rows), strings.Join(v.keys, ", ")), textWidth, "  "))
	b.WriteString(v.table.Wrap(textWidth, len(v.keys)))
	if len(v.same) > 0 {
		var parts []string
		for _, s := range v.same {
			// A column and its value stay on one line (a NUL holds
			// their words together through the wrap).
			parts = append(parts, strings.ReplaceAll(s.Column+" "+s.Value, " ", "\x00"))
		}
		b.WriteString(strings.ReplaceAll(wrapWords("same in all: "+strings.Join(parts, ", "), textWidth, "  "), "\x00", " "))
	}
	if v.verdict != "" {
		b.WriteString(wrapWords("verdict: "+v.verdict, textWidth, "  "))
	}
	for _, u := range v.unwell {
		b.WriteString(wrapWords(u, textWidth, "  "))
	}
	if len(v.clients) > 0 {
		b.WriteString("each member at the end ({} = idle, - = not in the group, stopped = stopped by a fatal error):\n")
		b.WriteString(v.members.Wrap(textWidth, 1))
	}
	for _, n := range v.notes {
		b.WriteString("error: " + n + "\n")
	}
	return b.String()
}

// notesHTML is what the text says between the tables (same in all, the
// verdict, the rows that ended unhealthy, the rows that failed), a
// paragraph each, for a notebook.
func (v *compareView) notesHTML() string {
	var b strings.Builder
	p := func(s string) { b.WriteString("<p>" + html.EscapeString(s) + "</p>") }
	if len(v.same) > 0 {
		var parts []string
		for _, s := range v.same {
			parts = append(parts, s.Column+" "+s.Value)
		}
		p("same in all: " + strings.Join(parts, ", "))
	}
	if v.verdict != "" {
		p("verdict: " + v.verdict)
	}
	for _, u := range v.unwell {
		p(u)
	}
	for _, n := range v.notes {
		p("error: " + n)
	}
	return b.String()
}

// wrapWords breaks a line at spaces to fit width columns, the lines after
// the first indented.
func wrapWords(s string, width int, indent string) string {
	var b strings.Builder
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) > width:
			b.WriteString(line + "\n")
			line = indent + w
		default:
			line += " " + w
		}
	}
	b.WriteString(line + "\n")
	return b.String()
}

// verdictMetric is one metric the verdict ranks, lower being better.
type verdictMetric struct {
	name, unit string
	of         func(r *compareRow) int
	// partitionTime: the metric counts partition x ticks. When every row
	// ran in real time the verdict weighs and writes it as partition x
	// seconds: rows may differ in tick.ms (compare tick.ms 5,10), where
	// the same count of ticks is not the same time.
	partitionTime bool
}

var verdictMetrics = []verdictMetric{
	{"unavailability", health.Unit, func(r *compareRow) int { return r.Unavailable }, true},
	{"duplicates", "", func(r *compareRow) int { return r.Duplicates }, false},
	{"lost", "", func(r *compareRow) int { return r.Lost }, false},
}

// verdict says which combination is best on unavailability, duplicates
// and lost records and by how much against the next best, among the rows
// that ended healthy (all rows when none did), and whether every row
// ended healthy; a combination best on all three (alone on two) is named
// first. "" with fewer than two rows that ran.
func verdict(rows []compareRow) string {
	var ranked, unwell []*compareRow
	for i := range rows {
		switch r := &rows[i]; {
		case r.Error != "":
		case r.Health.OK:
			ranked = append(ranked, r)
		default:
			unwell = append(unwell, r)
		}
	}
	if len(ranked)+len(unwell) < 2 {
		return ""
	}
	every, note := "every row", "every row ended healthy"
	switch {
	case len(ranked) == 0:
		ranked, note = unwell, "every row ended unhealthy"
	case len(unwell) > 0:
		var names []string
		for _, r := range unwell {
			names = append(names, r.name())
		}
		note = listNames(names) + " ended unhealthy and " + isAre(len(names)) + " not ranked"
		if len(ranked) == 1 {
			return ranked[0].name() + ", the one row that ended healthy (" + note + ")."
		}
		every = "every healthy row"
	}
	var parts []string
	bestAll := map[*compareRow]int{} // rows among the best on every metric: on how many alone
	for _, r := range ranked {
		bestAll[r] = 0
	}
	for _, m := range verdictMetrics {
		text, bests := m.rank(ranked, every)
		parts = append(parts, text)
		for r := range bestAll {
			switch {
			case !slices.Contains(bests, r):
				delete(bestAll, r)
			case len(bests) == 1:
				bestAll[r]++
			}
		}
	}
	// A row best alone on two metrics and tied best on the third wins
	// outright; best alone on one, the metric's own words say it.
	lead := ""
	for r, alone := range bestAll {
		if len(bestAll) == 1 && alone >= 2 {
			lead = r.name() + " is best on all three: "
		}
	}
	return lead + strings.Join(parts, "; ") + "; " + note + "."
}

// rank is one metric's verdict, and the rows best on it:
// "unavailability: cooperative-sticky best with 67 partition x ticks, 41
// (38%) fewer than range (108)", or "lost: 0 in every row".
func (m verdictMetric) rank(rows []*compareRow, every string) (string, []*compareRow) {
	timed := m.partitionTime
	for _, r := range rows {
		timed = timed && r.clk.real
	}
	// The value weighed: the count, or in real time its partition x
	// milliseconds; spelled as the tables spell it.
	of := func(r *compareRow) int64 {
		if timed {
			return r.clk.ms(m.of(r))
		}
		return int64(m.of(r))
	}
	spell := func(v int64) string {
		if timed {
			return wallclock.SecondsText(v)
		}
		return strconv.FormatInt(v, 10)
	}
	best, next := int64(-1), int64(-1)
	for _, r := range rows {
		v := of(r)
		switch {
		case best < 0 || v < best:
			best, next = v, best
		case v > best && (next < 0 || v < next):
			next = v
		}
	}
	unit, fewer := "", "fewer"
	switch {
	case timed:
		unit, fewer = " (partition x seconds)", "less"
	case m.unit != "":
		unit = " " + m.unit
	}
	var bests []*compareRow
	var bestNames, nextNames []string
	for _, r := range rows {
		switch of(r) {
		case best:
			bests = append(bests, r)
			bestNames = append(bestNames, r.name())
		case next:
			nextNames = append(nextNames, r.name())
		}
	}
	if next < 0 {
		return fmt.Sprintf("%s: %s%s in %s", m.name, spell(best), unit, every), bests
	}
	less := spell(next - best)
	if best > 0 {
		if pct := (100*(next-best) + next/2) / next; pct > 0 {
			less += fmt.Sprintf(" (%d%%)", pct)
		} else {
			less += " (under 1%)" // a difference that rounds to 0% is still one
		}
	}
	return fmt.Sprintf("%s: %s best with %s%s, %s %s than %s (%s)", m.name, listNames(bestNames), spell(best), unit,
		less, fewer, listNames(nextNames), spell(next)), bests
}

// listNames joins names in words: "a", "a and b", "a, b and c", and past
// four "a, b, c and 5 more".
func listNames(names []string) string {
	switch n := len(names); {
	case n == 0:
		return ""
	case n == 1:
		return names[0]
	case n <= 4:
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	default:
		return strings.Join(names[:3], ", ") + " and " + strconv.Itoa(n-3) + " more"
	}
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// csv is one line per combination, every metric, for spreadsheets: the
// setting of each key, the table's columns in full, the health in words,
// and each member's end.
func (v *compareView) csv() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	header := append([]string{}, v.keys...)
	header = append(header, "protocol", "tick", "generation", "rebalances", "paused_per_rebalance", "pause_per_rebalance",
		"pause_partition_ticks", "unavailable_partition_ticks")
	for _, c := range sim.Causes {
		header = append(header, "unavailable_"+c.String())
	}
	// In real time the counts of ticks again as time (the tick and the
	// time at the end in ms, the pause meter, unavailability and each cause in partition x
	// seconds), each row at its own tick.ms.
	real := v.allReal()
	if real {
		header = append(header, "tick_ms", "time_ms", "pause_partition_seconds", "unavailable_partition_seconds")
		for _, c := range sim.Causes {
			header = append(header, "unavailable_"+c.String()+"_seconds")
		}
	}
	header = append(header, "max_lag_records", "max_lag_partition", "max_lag_tick", "processed", "duplicates", "lost", "idle",
		"members", "members_running", "members_stopped", "unowned_partitions", "partitions_held_by_down_members", "healthy", "health")
	for _, c := range v.clients {
		header = append(header, "end "+c)
	}
	header = append(header, "error")
	w.Write(header)
	for i := range v.rows {
		r := &v.rows[i]
		rec := append([]string{}, r.values...)
		if r.Error != "" {
			for len(rec) < len(header)-1 {
				rec = append(rec, "")
			}
			w.Write(append(rec, r.Error))
			continue
		}
		protocol := r.Protocol
		if protocol == "" {
			protocol = string(sim.ClassicGroup)
		}
		itoa := strconv.Itoa
		rec = append(rec, protocol, itoa(r.Tick), itoa(r.Generation), itoa(r.Rebalances), strings.Join(strings.Fields(joinInts(r.PausedPerRebalance)), " "),
			strings.Join(strings.Fields(joinInts(r.PausePerRebalance)), " "), itoa(r.Pause), itoa(r.Unavailable))
		for _, c := range sim.Causes {
			rec = append(rec, itoa(r.ByCause[c.String()]))
		}
		if real {
			secs := func(ticks int) string { return strconv.FormatFloat(float64(r.clk.ms(ticks))/1000, 'f', -1, 64) }
			rec = append(rec, itoa(r.clk.tickMS), strconv.FormatInt(r.clk.ms(r.Tick), 10), secs(r.Pause), secs(r.Unavailable))
			for _, c := range sim.Causes {
				rec = append(rec, secs(r.ByCause[c.String()]))
			}
		}
		lagAt := ""
		if r.MaxLag.Partition != nil {
			lagAt = *r.MaxLag.Partition
		}
		var stopped []string
		for _, s := range r.Health.Stopped {
			stopped = append(stopped, s.Client+":"+s.Error)
		}
		rec = append(rec, itoa(r.MaxLag.Records), lagAt, itoa(r.MaxLag.Tick), itoa(r.Processed), itoa(r.Duplicates), itoa(r.Lost),
			strings.Join(r.Idle, " "), itoa(r.Health.Members), itoa(len(r.Health.Running)), strings.Join(stopped, " "),
			itoa(len(r.Health.Unowned)), itoa(len(r.Health.HeldByDown)), strconv.FormatBool(r.Health.OK), r.Health.Words)
		for _, c := range v.clients {
			e, ok := r.ends[c]
			if !ok {
				e = "-"
			}
			rec = append(rec, e)
		}
		w.Write(append(rec, ""))
	}
	w.Flush()
	return b.Bytes()
}

// figure is compare's chart: a panel per metric, each its own axis, and
// each member's partitions at the end.
func (v *compareView) figure() (*chart.Figure, error) {
	var names []string
	for i := range v.rows {
		n := v.rows[i].name()
		switch {
		case v.rows[i].Error != "":
			n += " (failed)"
		case !v.rows[i].Health.OK:
			n += " (ended unhealthy)"
		}
		names = append(names, n)
	}
	// A panel's value in a row: the metric's count, read by as (a
	// failed row's 0).
	metric := func(name string, of func(r *compareRow) int, as func(r *compareRow, n int) float64) chart.CompareMetric {
		m := chart.CompareMetric{Name: name}
		for i := range v.rows {
			val := 0.0
			if v.rows[i].Error == "" {
				val = as(&v.rows[i], of(&v.rows[i]))
			}
			m.Values = append(m.Values, val)
		}
		return m
	}
	count := func(_ *compareRow, n int) float64 { return float64(n) }
	// In real time (every row) the two partition x ticks panels are in
	// partition x seconds, as the table writes them.
	unit, partTime := health.Unit, count
	if v.allReal() {
		unit, partTime = "partition x seconds", func(r *compareRow, n int) float64 { return float64(r.clk.ms(n)) / 1000 }
	}
	metrics := []chart.CompareMetric{
		metric("unavailable ("+unit+")", func(r *compareRow) int { return r.Unavailable }, partTime),
		metric("pause meter ("+unit+")", func(r *compareRow) int { return r.Pause }, partTime),
		metric("rebalances", func(r *compareRow) int { return r.Rebalances }, count),
		metric("duplicates", func(r *compareRow) int { return r.Duplicates }, count),
		metric("lost", func(r *compareRow) int { return r.Lost }, count),
		metric("most lag (records)", func(r *compareRow) int { return r.MaxLag.Records }, count),
	}
	counts := make([][]float64, len(v.rows))
	for i := range v.rows {
		for _, c := range v.clients {
			counts[i] = append(counts[i], float64(v.rows[i].parts[c]))
		}
	}
	title := strings.Join(v.keys, " x ") + " compared"
	if v.scenario != "" {
		title += " after " + v.scenario
	}
	return chart.CompareFigure(title, names, metrics, v.clients, counts)
}

// scenario is the branch's history in a few words for a title: its `new`
// when it is not the default world, then its commands other than time,
// a command given to several members in a row as one ("restart C1..C4"),
// and the tick it ended at.
func (s *Session) scenario() string {
	var parts []string
	if nl := s.cur.hist.origin.newLine; nl != "" && nl != "new" {
		parts = append(parts, nl)
	}
	type run struct{ verb, rest string }
	var last run
	var members []string
	flush := func() {
		if len(members) > 0 {
			parts = append(parts, strings.TrimSpace(last.verb+" "+health.Members(members)+" "+last.rest))
			members = nil
		}
	}
	for _, in := range s.cur.hist.inputs {
		if in.step {
			continue
		}
		f := strings.Fields(in.line)
		if len(f) >= 2 && sim.IsClientID(f[1]) {
			r := run{f[0], strings.Join(f[2:], " ")}
			if r != last {
				flush()
			}
			last = r
			members = append(members, f[1])
			continue
		}
		flush()
		last = run{}
		parts = append(parts, in.line)
	}
	flush()
	text := strings.Join(parts, "; ")
	if len([]rune(text)) > 80 {
		text = string([]rune(text)[:79]) + "…"
	}
	if text == "" {
		return fmt.Sprintf("%d ticks", s.World().Tick)
	}
	return fmt.Sprintf("%s (tick %d)", text, s.World().Tick)
}
