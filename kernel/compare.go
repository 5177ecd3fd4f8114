package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/kgrepl/kgrepl/kernel/health"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

// compare reruns the branch's history under other settings and decides:
// one row per combination, the columns equal in every row collapsed into a
// line, a verdict (best on unavailability, duplicates and losses, by how
// much, which rows ended unhealthy), each member's end in a second table,
// as CSV and JSON too, and a chart of one panel per metric.

// columnName heads a compare column for a setting: the key, or when it is
// long its last word (partition.assignment.strategy -> strategy,
// session.timeout.ms -> timeout); the line above the table names the keys.
func columnName(key string) string {
	if len(key) <= 12 {
		return key
	}
	words := strings.Split(strings.TrimSuffix(key, ".ms"), ".")
	if n := len(words); n > 1 && words[n-1] == "id" {
		return words[n-2] + ".id" // group.instance.id -> instance.id
	}
	return words[len(words)-1]
}

type compareRow struct {
	Settings string `json:"settings"`
	// Values is the combination: each key compared and its value here.
	Values map[string]string `json:"values"`
	// Protocol is the group's type at the end (classic or consumer); a
	// consumer group's Generation is its group epoch and its Rebalances
	// its epoch bumps (see metrics).
	Protocol   string `json:"protocol,omitempty"`
	Tick       int    `json:"tick"`
	Generation int    `json:"generation"`
	Rebalances int    `json:"rebalances"`
	Pause      int    `json:"pause_partition_ticks"`
	// PausedPerRebalance counts the partitions each rebalance paused, and
	// PausePerRebalance its partition x ticks, in generation order.
	PausedPerRebalance []int `json:"paused_per_rebalance"`
	PausePerRebalance  []int `json:"pause_per_rebalance"`
	// In real time (time ms): the clock's tick and the time at the end in
	// milliseconds, the pause meter and each rebalance's pause in
	// partition x seconds, as metrics --json writes them; absent on the
	// page's scale.
	TickMS                   *int      `json:"tick_ms,omitempty"`
	TimeMS                   *int64    `json:"time_ms,omitempty"`
	PauseSeconds             *float64  `json:"pause_partition_seconds,omitempty"`
	PausePerRebalanceSeconds []float64 `json:"pause_per_rebalance_seconds,omitempty"`
	Processed                int       `json:"processed"`
	Duplicates               int       `json:"duplicates"`
	Lost                     int       `json:"lost"`
	// Assignment is each member's partitions at the end, by client id
	// (seed short names, e.g. {o0 p0}); Idle lists the members with none.
	Assignment memberMap `json:"assignment"`
	Idle       []string  `json:"idle"`
	// Unavailability by cause, the most lag and the health at the end, as
	// metrics --json has them.
	health.Summary
	// values are the combination's values, in the order of the keys.
	values []string
	// parts counts each member's partitions, for the chart; ends is each
	// client's cell in the members' table.
	parts map[string]int
	ends  map[string]string
	// clk is the row's clock: its table cells that count ticks read as
	// time in real time.
	clk   clock
	Error string `json:"error,omitempty"`
}

// memberMap is a value per client id, written to JSON with its keys in
// natural order (C2 before C10) as every view lists members.
type memberMap map[string]string

func (m memberMap) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	natural.Sort(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(m[k])
		b.Write(kj)
		b.WriteByte(':')
		b.Write(vj)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// name is the combination's name: its values joined by /.
func (r *compareRow) name() string { return strings.Join(r.values, "/") }

// fillRow reads a combination's results off the world it ended in.
func fillRow(row *compareRow, w *sim.World) {
	d := w.Delivery(w.Cfg.Isolation)
	row.clk = clockOf(w)
	row.Tick, row.Generation, row.Rebalances, row.Pause, row.Processed = w.Tick, generationOf(w.Group), w.Group.RebalanceStarts, w.Meter.Total, w.Processed()
	if w.Group.Type() == sim.ConsumerGroup {
		row.Protocol = string(sim.ConsumerGroup) // a classic row's line stays as it was
	}
	row.Duplicates, row.Lost = d.Duplicates, d.Lost
	row.PausedPerRebalance, row.PausePerRebalance = []int{}, []int{}
	for _, e := range w.Meter.Entries {
		row.PausedPerRebalance = append(row.PausedPerRebalance, len(e.Partitions))
		row.PausePerRebalance = append(row.PausePerRebalance, e.PartitionTicks)
	}
	row.Assignment, row.Idle, row.parts, row.ends = memberMap{}, []string{}, map[string]int{}, map[string]string{}
	for _, gm := range w.Group.Members() {
		row.Assignment[gm.ClientID] = w.Layout().PartList(gm.Assignment)
		row.parts[gm.ClientID] = len(gm.Assignment)
		if len(gm.Assignment) == 0 {
			row.Idle = append(row.Idle, gm.ClientID)
		}
	}
	natural.Sort(row.Idle)
	row.Summary = health.Of(w)
	if row.clk.real {
		tickMS, now := row.clk.tickMS, row.clk.ms(row.Tick)
		row.TickMS, row.TimeMS, row.PauseSeconds = &tickMS, &now, row.clk.seconds(row.Pause)
		row.PausePerRebalanceSeconds = []float64{}
		for _, pt := range row.PausePerRebalance {
			row.PausePerRebalanceSeconds = append(row.PausePerRebalanceSeconds, *row.clk.seconds(pt))
		}
	}
	for _, c := range w.Clients() {
		row.ends[c] = "-" // not in the group at the end
		if a, ok := row.Assignment[c]; ok {
			row.ends[c] = a
		}
	}
	for _, s := range row.Health.Stopped {
		if _, in := row.Assignment[s.Client]; !in {
			row.ends[s.Client] = "stopped"
		}
	}
}

func joinInts(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	var out []string
	for _, x := range xs {
		out = append(out, strconv.Itoa(x))
	}
	return strings.Join(out, " ")
}

// Compare reruns the current branch's history under each combination of
// the given settings (key -> values) and returns one row per combination.
func (s *Session) Compare(keys []string, values [][]string) ([]compareRow, error) {
	// Counted before any is built: 20 values of 7 keys are 20^7 combinations.
	var how []string
	var sizes []int
	for _, vs := range values {
		how = append(how, strconv.Itoa(len(vs)))
		sizes = append(sizes, len(vs))
	}
	if err := limitCompareCombos.checkProduct("compare", strings.Join(how, " x ")+" values", sizes...); err != nil {
		return nil, err
	}
	n := 1
	for _, k := range sizes {
		n *= k
	}
	ticks := s.World().Tick + 1
	if err := limitCompareWork.checkProduct("compare", fmt.Sprintf("%d combinations x %d ticks of history", n, ticks), n, ticks); err != nil {
		return nil, err
	}
	combos := [][]string{{}}
	for _, vs := range values {
		var next [][]string
		for _, c := range combos {
			for _, v := range vs {
				next = append(next, append(append([]string{}, c...), v))
			}
		}
		combos = next
	}
	script := s.cur.scriptLines(true)
	rows := make([]compareRow, len(combos))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, combo := range combos {
		wg.Add(1)
		go func(i int, combo []string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rows[i] = runCombo(s, script, keys, combo)
		}(i, combo)
	}
	wg.Wait()
	if s.stopRequested() {
		return nil, interrupted("compare")
	}
	return rows, nil
}

// startKeys are the compared settings a member reads only when it starts
// (group.protocol, group.remote.assignor, group.instance.id): compared,
// each must be in force when `new` starts the world's members, for every
// member, or those would keep what they started with (a classic group
// that consumer-protocol joiners cannot enter; static members in the
// dynamic row). Other settings keep compare's rule (set right after
// `new`), so their comparisons are what they were.
func startKeys(keys []string) map[string]bool {
	out := map[string]bool{}
	for _, k := range keys {
		if k == "group.protocol" || k == "group.remote.assignor" || k == "group.instance.id" {
			out[k] = true
		}
	}
	return out
}

// settingLine is the set command that puts one of compare's values in
// force. Commas separate compare's values, so a list value of
// partition.assignment.strategy joins its assignors with + instead
// (cooperative-sticky+range is the list cooperative-sticky,range).
func settingLine(key, val string) string {
	if listSetting(key) {
		val = strings.ReplaceAll(val, "+", ",")
	}
	return "set " + key + " " + val
}

// listSetting: the key's value is a list (partition.assignment.strategy,
// for every client or for one).
func listSetting(key string) bool {
	if _, k, ok := strings.Cut(key, "."); ok && strings.HasPrefix(key, "C") {
		if _, found := sim.LookupSetting(k); found {
			key = k
		}
	}
	return key == "partition.assignment.strategy"
}

// runCombo runs the script with the settings put right after its `new`;
// the history's own changes of those keys are dropped (of a start setting,
// a client's own too), so the comparison is of the settings asked for.
// A command that read a file reads what it read then (scriptLine.file).
func runCombo(parent *Session, script []scriptLine, keys, vals []string) compareRow {
	var names []string
	for i := range keys {
		names = append(names, keys[i]+"="+vals[i])
	}
	row := compareRow{Settings: strings.Join(names, " "), values: vals, Values: map[string]string{}}
	for i := range keys {
		row.Values[keys[i]] = vals[i]
	}
	sess := NewSession()
	sess.interrupt = parent.interrupt // a Ctrl-C stops every combination (execLine keeps it)
	sess.compareKeys = map[string]bool{}
	for _, k := range keys {
		for _, st := range compareSettings(k) {
			sess.compareKeys[st] = true
		}
	}
	start := startKeys(keys)
	newDone := false
	for _, l := range script {
		if parent.stopRequested() {
			row.Error = ErrInterrupted.Error()
			return row
		}
		f := strings.Fields(l.line)
		// A set of a compared key (the world's, or a client's own value
		// that would hide the compared one) is left out: the compared
		// value is set after new. Among the origin's settings, before new,
		// the world's line of a compared key gives the compared value in
		// its place instead: left out, the page's default would stand
		// there meanwhile, which the settings after it may refuse
		// (heartbeat.interval.ms 3000 is not below the page's
		// session.timeout.ms of 30 ms).
		if len(f) >= 2 && f[0] == "set" {
			_, perClient, ok := strings.Cut(f[1], ".")
			if i := indexOf(keys, f[1]); i < len(keys) {
				if !newDone {
					if _, err := sess.execLine(settingLine(keys[i], vals[i])); err != nil {
						row.Error = err.Error()
						return row
					}
				}
				continue
			}
			if ok && sim.IsClientID(f[1][:strings.IndexByte(f[1], '.')]) && start[perClient] {
				continue
			}
		}
		sess.supply = l.file
		_, err := sess.execLine(l.line)
		sess.supply = nil
		if err != nil {
			row.Error = err.Error()
			return row
		}
		if len(f) > 0 && f[0] == "new" {
			newDone = true
			for i := range keys {
				if _, err := sess.execLine(settingLine(keys[i], vals[i])); err != nil {
					row.Error = err.Error()
					return row
				}
			}
			// The members `new` starts were built before the settings, and
			// a running member keeps what it joined with (a session
			// timeout, say, goes in its JoinGroup): build the world again
			// with the settings in force from its start, as the comparison
			// means.
			if err := sess.rebuildWith(start); err != nil {
				row.Error = "new: " + err.Error()
				return row
			}
		}
	}
	fillRow(&row, sess.World())
	return row
}

// rebuildWith makes the branch's world again from its origin (its shape,
// an import's members and assignment) with the settings in force now,
// each of keys in force for every member (a client's own setting of one
// is dropped): compare's start settings, which members read only when
// they start.
func (s *Session) rebuildWith(keys map[string]bool) error {
	cfg := s.cur.world.Cfg.Clone()
	var kept []sim.Override
	for _, o := range cfg.Overrides {
		if !keys[o.Key] {
			kept = append(kept, o)
		}
	}
	cfg.Overrides = kept
	o := *s.cur.hist.origin
	o.cfg = cfg.Clone()
	w, err := o.world()
	if err != nil {
		return err
	}
	s.cur.hist = history{origin: &o}
	s.cur.world, s.cur.frozen, s.cur.cp = w, false, cpClock{}
	return nil
}

// compareSettings are the settings a compare KEY changes: a shortcut is
// the keys it stands for (commit and enable.auto.commit both set
// commit.mode; producer sets enable.idempotence and transactional.id).
func compareSettings(key string) []string {
	switch key {
	case "commit", "enable.auto.commit":
		return []string{"commit.mode"}
	case "producer":
		return []string{"enable.idempotence", "transactional.id"}
	}
	return []string{key}
}

func cmdCompare(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("compare", args, []string{"--out", "--csv"}, []string{"--json"})
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 || len(pos)%2 != 0 {
		return nil, usageErr("compare", "want pairs of KEY and comma-separated values")
	}
	var keys []string
	var values [][]string
	combos := 1
	named := map[string]string{} // the setting a key changes -> the key that named it
	for i := 0; i < len(pos); i += 2 {
		key := pos[i]
		if key != "commit" && key != "producer" {
			if _, ok := sim.LookupSetting(key); !ok {
				return nil, fmt.Errorf("compare: unknown setting %q (see show config)", key)
			}
		}
		// A setting named twice would leave one list unused (the later
		// value of each combination wins): refuse it, shortcuts included.
		for _, st := range compareSettings(key) {
			first, ok := named[st]
			switch {
			case ok && first == key:
				return nil, usageErr("compare", "%s is named twice (name each setting once, with all its values in one list)", key)
			case ok:
				return nil, usageErr("compare", "%s and %s both change %s (name it once)", first, key, st)
			}
			named[st] = key
		}
		vs := strings.Split(pos[i+1], ",")
		combos = mulCap(combos, len(vs), limitCompareCombos.max)
		if combos > limitCompareCombos.max {
			// Compare names the bound, before any value is tried.
			values = append(values, vs)
			break
		}
		seen := map[string]bool{}
		for _, v := range vs {
			if v == "" {
				return nil, usageErr("compare", "%s: an empty value in %q (values are separated by single commas)", key, pos[i+1])
			}
			if seen[v] {
				return nil, usageErr("compare", "%s: %s is listed twice in %q (each value is one row)", key, v, pos[i+1])
			}
			seen[v] = true
			probe := NewSession()
			if _, err := probe.Exec(settingLine(key, v)); err != nil {
				// set's own words, which name the key and what it allows,
				// in compare's context (its usage, not set's).
				msg := strings.TrimPrefix(err.Error(), "set: ")
				msg = strings.TrimSuffix(msg, " (usage: "+lookup("set").usage+")")
				if listSetting(key) {
					// the list as typed here, with its + (settingLine)
					msg = strings.ReplaceAll(msg, strconv.Quote(strings.ReplaceAll(v, "+", ",")), strconv.Quote(v))
				}
				return nil, usageErr("compare", "%s", msg)
			}
		}
		keys, values = append(keys, key), append(values, vs)
	}
	if out, ok := fl["--out"]; ok {
		if ext := strings.ToLower(filepath.Ext(out)); ext != ".svg" && ext != ".png" && ext != ".pdf" {
			return nil, usageErr("compare", "--out %q: the chart is .svg, .png or .pdf", out)
		}
	}
	rows, err := s.Compare(keys, values)
	if err != nil {
		return nil, err
	}
	v := newCompareView(s, keys, rows)
	if out, ok := fl["--csv"]; ok {
		if err := writeAtomic(s.path(out), v.csv()); err != nil {
			return nil, fmt.Errorf("compare --csv %s: %v", out, err)
		}
	}
	if fl["--json"] == "true" {
		line := jsonLine(map[string]any{"rows": rows, "same_in_all": v.same, "verdict": v.verdict})
		res := &Result{Text: line, JSON: line}
		if out, ok := fl["--csv"]; ok {
			res.Text += "\ncompare: wrote " + out
		}
		return res, nil
	}
	res := &Result{Text: v.text()}
	// The panels, inline in a notebook and written with --out.
	c, err := v.figure()
	if err != nil {
		return nil, fmt.Errorf("compare: %v", err)
	}
	svg, err := c.SVG()
	if err != nil {
		return nil, fmt.Errorf("compare: %v", err)
	}
	res.SVG = string(svg)
	res.HTML = v.table.HTML() + v.notesHTML() + v.members.HTML() + InlineSVG(res.SVG)
	if out, ok := fl["--out"]; ok {
		data := svg
		switch strings.ToLower(filepath.Ext(out)) {
		case ".png":
			data, err = c.PNG()
		case ".pdf":
			data, err = c.PDF()
		}
		if err != nil {
			return nil, fmt.Errorf("compare: %v", err)
		}
		if err := writeAtomic(s.path(out), data); err != nil {
			return nil, fmt.Errorf("compare --out %s: %v", out, err)
		}
		res.Text += fmt.Sprintf("compare: wrote %s\n", out)
	}
	if out, ok := fl["--csv"]; ok {
		res.Text += fmt.Sprintf("compare: wrote %s\n", out)
	}
	return res, nil
}
