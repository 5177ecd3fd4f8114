package kernel

// The commands that build and change the world: new, produce, set, show,
// join, close, crash and drop.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// newOptions are new's options read.
type newOptions struct {
	topo   sim.Topology
	keep   bool
	static bool
	// An import: --from-describe FILE, --group G; --topics and --output as
	// given (they add to the file's topics).
	from, group string
	topics      []sim.TopicSpec
	output      *sim.TopicSpec
}

// parseNew reads new's options.
func parseNew(args []string) (newOptions, error) {
	// --defaults was the old spelling of what plain new now does; it is
	// still accepted, and changes nothing.
	pos, fl, err := flags("new", args, []string{"--topics", "--output", "--members", "--from-describe", "--group"},
		[]string{"--keep-settings", "--defaults", "--static", "--kafka-defaults"})
	opt := newOptions{topo: sim.DefaultTopology()}
	if err != nil {
		return opt, err
	}
	if fl["--keep-settings"] == "true" && fl["--kafka-defaults"] == "true" {
		return opt, usageErr("new", "--keep-settings and --kafka-defaults contradict each other (give one)")
	}
	if err := needArgs("new", pos, 0, 0); err != nil {
		return opt, err
	}
	from, importing := fl["--from-describe"]
	if _, ok := fl["--members"]; ok && importing {
		return opt, usageErr("new", "--members and --from-describe contradict each other (the file gives the members)")
	}
	if _, ok := fl["--group"]; ok && !importing {
		return opt, usageErr("new", "--group chooses a group of a describe file: it goes with --from-describe FILE")
	}
	if importing && from == "" {
		return opt, usageErr("new", "--from-describe needs a file name")
	}
	opt.from, opt.group = from, fl["--group"]
	if v, ok := fl["--topics"]; ok {
		opt.topo.Inputs = nil
		for _, spec := range strings.Split(v, ",") {
			t, err := parseTopicSpec("--topics", spec)
			if err != nil {
				return opt, err
			}
			opt.topo.Inputs = append(opt.topo.Inputs, t)
		}
		opt.topics = opt.topo.Inputs
	}
	if v, ok := fl["--output"]; ok {
		t, err := parseTopicSpec("--output", v)
		if err != nil {
			return opt, err
		}
		opt.topo.Output, opt.output = t, &t
	}
	if v, ok := fl["--members"]; ok {
		n, err := parseAtLeast("new", "--members", v, 0, limitMembers)
		if err != nil {
			return opt, err
		}
		opt.topo.Members = n
	}
	if fl["--keep-settings"] == "true" && fl["--defaults"] == "true" {
		return opt, usageErr("new", "--keep-settings and --defaults contradict each other")
	}
	opt.keep, opt.static = fl["--keep-settings"] == "true", fl["--static"] == "true"
	return opt, nil
}

func parseTopicSpec(flag, spec string) (sim.TopicSpec, error) {
	name, p, ok := strings.Cut(spec, ":")
	if !ok || name == "" {
		return sim.TopicSpec{}, usageErr("new", "%s %q: want NAME:PARTITIONS, e.g. orders:3", flag, spec)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 {
		return sim.TopicSpec{}, usageErr("new", "%s %q: the partition count %q is not a whole number >= 1", flag, spec, p)
	}
	return sim.TopicSpec{Name: name, Partitions: n}, nil
}

func cmdNew(s *Session, args []string) (*Result, error) {
	opt, err := parseNew(args)
	if err != nil {
		return nil, err
	}
	cfg := sim.DefaultConfig()
	kafka := indexOf(args, "--kafka-defaults") < len(args)
	switch {
	case opt.keep:
		cfg = s.cur.world.Cfg.Clone()
	case kafka:
		cfg = sim.KafkaDefaultConfig()
	}
	if opt.static {
		// Every member its own group.instance.id, from its client id, as
		// a deployment gives each pod its name (a member an import gives
		// an id keeps the file's).
		if err := cfg.Set("", "group.instance.id", sim.PerMember); err != nil {
			return nil, fmt.Errorf("new --static: %v", err)
		}
	}
	// The line the origin keeps: the shape of the world; the settings
	// (--keep-settings, --static, --kafka-defaults) are in the origin's own copy of them.
	line := strings.Join(append([]string{"new"}, filterOut(filterOut(filterOut(filterOut(args, "--defaults"), "--keep-settings"), "--static"), "--kafka-defaults")...), " ")
	if opt.from != "" {
		return newImported(s, opt, cfg, line)
	}
	topo := opt.topo
	if err := checkTopology("new", topo, cfg.RecordsPerPartition); err != nil {
		return nil, err
	}
	w, err := sim.New(topo, cfg)
	if err != nil {
		return nil, fmt.Errorf("new: %v", err)
	}
	// The origin holds its own copy of the settings: the world's change
	// as it runs, the origin's never.
	s.cur.hist = history{origin: &origin{newLine: line, topo: topo, cfg: cfg.Clone()}}
	s.cur.cp = cpClock{}
	s.cur.world, s.cur.frozen = w, false
	var ins []string
	for _, t := range topo.Inputs {
		ins = append(ins, fmt.Sprintf("%s (%d)", t.Name, t.Partitions))
	}
	s.say("new world: group %s, input %s, output %s (%d), %d member(s), %d records per partition",
		topo.Group, strings.Join(ins, ", "), topo.Output.Name, topo.Output.Partitions, topo.Members, w.Cfg.RecordsPerPartition)
	if kafka {
		s.say("real time: time ms, a tick is %d ms; Kafka 4.0's defaults (session.timeout.ms %d, max.poll.interval.ms %d, max.poll.records %d, ...: show config)",
			w.Cfg.TickMS, w.Cfg.Client.SessionTimeout, w.Cfg.Client.MaxPollInterval, w.Cfg.Client.MaxPollRecords)
	}
	return nil, nil
}

// newImported is new --from-describe FILE: the world starts as the file
// shows the group (owngroup.go).
func newImported(s *Session, opt newOptions, cfg sim.Config, line string) (*Result, error) {
	imp := importOptions{file: opt.from, group: opt.group, topics: opt.topics, output: opt.output, keep: opt.keep,
		rawCmd: "new --from-describe " + opt.from}
	p, f, err := importWorld(s, imp, &cfg)
	if err != nil {
		return nil, err
	}
	if err := checkTopology(imp.rawCmd, p.topo, cfg.RecordsPerPartition); err != nil {
		return nil, err
	}
	w, err := sim.NewStarted(p.topo, cfg, p.start)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", imp.rawCmd, err)
	}
	s.cur.hist = history{origin: &origin{newLine: line, topo: p.topo, cfg: cfg.Clone(), file: f, start: p.start, names: p.names}}
	s.cur.cp = cpClock{}
	s.cur.world, s.cur.frozen = w, false
	s.say("%s", importReport(p, w, imp))
	return nil, nil
}

func filterOut(args []string, drop string) []string {
	var out []string
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}

func cmdProduce(s *Session, args []string) (*Result, error) {
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			return cmdProduceSteady(s, args)
		}
	}
	if err := needArgs("produce", args, 2, 2); err != nil {
		return nil, err
	}
	w := s.World()
	tp, err := w.Layout().ParsePartition(args[0])
	if err != nil {
		return nil, fmt.Errorf("produce: %v", err)
	}
	n, err := parseAtLeast("produce", "N", args[1], 1, limitPartitionRecords)
	if err != nil {
		return nil, err
	}
	hw := w.Log(tp).HW()
	if err := limitPartitionRecords.checkSum("produce", fmt.Sprintf("%s holds %d + %d", tp, hw, n), hw, n); err != nil {
		return nil, err
	}
	shape := shapeOf(w)
	shape.records += n // both at most 2^31-1 a partition, times at most 2^40 partitions: no overflow
	if err := checkCost("produce", shape, fmt.Sprintf("%s (%s more records)", describeShape(shape), group(n))); err != nil {
		return nil, err
	}
	from := w.Events.Len()
	if err := w.ProduceInput(tp, n); err != nil {
		return nil, err
	}
	s.narrate(w, from)
	return nil, nil
}

func cmdSet(s *Session, args []string) (*Result, error) {
	if len(args) > 0 && strings.HasPrefix(args[0], "--") {
		return cmdSetFrom(s, args)
	}
	if len(args) == 1 {
		return nil, usageErr("set", "%s: missing VALUE", args[0])
	}
	if len(args) > 2 && strings.HasSuffix(args[1], ",") {
		// Kafka's list configs allow spaces around the commas; a command
		// line splits there.
		return nil, usageErr("set", "%s: a list is written without spaces: %s", args[0], strings.Join(args[1:], ""))
	}
	if err := needArgs("set", args, 2, 2); err != nil {
		return nil, err
	}
	w := s.World()
	key, val := args[0], args[1]
	switch key {
	case "commit":
		if val != "after" && val != "before" && val != "auto" {
			return nil, usageErr("set", "commit %q is not after, before or auto", val)
		}
		return nil, w.Set("", "commit.mode", val)
	case "producer":
		return nil, w.SetProducer(val)
	}
	if key == "records.per.partition" {
		// It takes effect at the next `new`, whose shape may differ from
		// this world's (`new --topics a:1 --keep-settings`): here it is
		// bounded as one partition's records, in the smallest world it
		// could make (one input partition, the output, no member), and
		// `new` checks it against the shape it is given. (Checked against
		// this world's shape, a saved branch's settings, which load and
		// compare set again in the default world before its `new`, were
		// refused there.)
		if n, err := strconv.Atoi(val); err == nil && n >= 0 {
			if err := limitPartitionRecords.checkf("set records.per.partition", n, ""); err != nil {
				return nil, err
			}
			smallest := worldShape{partitions: 2, records: n}
			if err := checkCost("set records.per.partition", smallest, fmt.Sprintf("%d records in one input partition", n)); err != nil {
				return nil, err
			}
		} else if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(val, "-") {
			_, err := parseAtLeast("set records.per.partition", "VALUE", val, 0, limitPartitionRecords)
			return nil, err
		}
	}
	client := ""
	if c, k, ok := strings.Cut(key, "."); ok && strings.HasPrefix(c, "C") && len(c) > 1 && c[1] >= '0' && c[1] <= '9' {
		client, key = c, k
	}
	// Every member's config is its overrides applied in order, at each
	// start and each set: their number is bounded (a key set again for a
	// client replaces its earlier override, so only clients x keys count,
	// and the repeats of enable.auto.commit and transactional.id). A set
	// past the bound is refused before the world is touched: a set adds at
	// most one override, so at the bound it is tried on a copy of the
	// settings first (sim.Config.Set keeps the rule of what replaces what).
	if n := len(w.Cfg.Overrides); client != "" && n >= limitOverrides.max {
		trial := w.Cfg.Clone()
		if err := trial.Set(client, key, val); err == nil && len(trial.Overrides) > limitOverrides.max {
			n := len(trial.Overrides)
			return nil, limitOverrides.checkf("set "+client+"."+key, n, fmt.Sprintf("%d per-client settings", n))
		}
	}
	if err := w.Set(client, key, val); err != nil {
		return nil, fmt.Errorf("set: %v", err)
	}
	return nil, nil
}

func cmdShow(s *Session, args []string) (*Result, error) {
	if len(args) == 1 && args[0] == "names" {
		return cmdShowNames(s)
	}
	if len(args) == 1 && args[0] == "traffic" {
		return cmdShowTraffic(s)
	}
	if len(args) == 0 || args[0] != "config" {
		return nil, usageErr("show", "show what? (config, names or traffic)")
	}
	rows, err := configRows(s.World(), args[1:])
	if err != nil {
		return nil, err
	}
	// The first column marks a value that differs from its default.
	t := &Table{Header: []string{"", "KEY", "VALUE", "DEFAULT", "SCOPE"}}
	changed := 0
	for _, r := range rows {
		mark := ""
		if r.Value != r.Default {
			mark = "*"
			changed++
		}
		t.Add(mark, r.Key, r.Value, r.Default, r.Scope)
	}
	note := "* differs from the default: none"
	if changed > 0 {
		note = fmt.Sprintf("* differs from the default (%d setting(s))", changed)
	}
	if s.World().Cfg.Time == sim.TimeMS {
		// In real time the defaults are Kafka's (new --kafka-defaults).
		note = strings.Replace(note, "the default", "the default (Kafka 4.0's, in real time)", 1)
	}
	return &Result{Text: t.Text() + note, Table: t, HTML: s.htmlOf(t)}, nil
}

// configRows are the settings show config lists: every one, or those
// keys names (a key's per-client rows, C2.KEY, with it), in the table's
// order; a key no row has is refused with the keys there are.
func configRows(w *sim.World, keys []string) ([]sim.ConfigRow, error) {
	all := w.Cfg.Rows()
	if len(keys) == 0 {
		return all, nil
	}
	// clientOf is the client a per-client row is of ("" for a world row).
	clientOf := func(row string) string {
		if c, _, ok := strings.Cut(row, "."); ok && sim.IsClientID(c) {
			return c
		}
		return ""
	}
	named := func(row, key string) bool {
		c := clientOf(row)
		return row == key || c != "" && row == c+"."+key
	}
	var out []sim.ConfigRow
	for _, r := range all {
		if slices.ContainsFunc(keys, func(k string) bool { return named(r.Key, k) }) {
			out = append(out, r)
		}
	}
	for _, k := range keys {
		if !slices.ContainsFunc(out, func(r sim.ConfigRow) bool { return named(r.Key, k) }) {
			var names []string
			for _, r := range all {
				if clientOf(r.Key) == "" {
					names = append(names, r.Key)
				}
			}
			return nil, fmt.Errorf("show config %s: no setting %s (settings: %s)", strings.Join(keys, " "), shortWord(k), strings.Join(names, " "))
		}
	}
	return out, nil
}

func cmdJoin(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("join", args, []string{"--topics"}, []string{"--static"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("join", pos, 1, 1); err != nil {
		return nil, err
	}
	var topics []string
	if v, ok := fl["--topics"]; ok {
		topics = strings.Split(v, ",")
	}
	w := s.World()
	if w.Member(pos[0]) == nil {
		if err := limitMembers.checkSum("join "+pos[0], fmt.Sprintf("%d clients + %s", len(w.Clients()), pos[0]), len(w.Clients()), 1); err != nil {
			return nil, err
		}
		shape := shapeOf(w)
		shape.members++
		if err := checkCost("join "+pos[0], shape, describeShape(shape)); err != nil {
			return nil, err
		}
	}
	from := w.Events.Len()
	if err := w.Join(pos[0], fl["--static"] == "true", topics); err != nil {
		return nil, err
	}
	s.narrate(w, from)
	return nil, nil
}

func memberCmd(name string, f func(*sim.World, string) error) func(*Session, []string) (*Result, error) {
	return func(s *Session, args []string) (*Result, error) {
		w := s.World()
		if len(args) != 1 {
			return nil, usageErr(name, "want exactly one member (running: %s)", strings.Join(liveClients(s), " "))
		}
		from := w.Events.Len()
		if err := f(w, args[0]); err != nil {
			return nil, err
		}
		s.narrate(w, from)
		return nil, nil
	}
}

func cmdClose(s *Session, args []string) (*Result, error) {
	switch {
	case len(args) == 1:
		return memberCmd("close", (*sim.World).Close)(s, args)
	case len(args) == 2 && args[1] == "--now":
		return memberCmd("close", (*sim.World).CloseNow)(s, args[:1])
	}
	return nil, usageErr("close", "want `close Cn` or `close Cn --now` (running: %s)", strings.Join(liveClients(s), " "))
}

func cmdCrash(s *Session, args []string) (*Result, error) {
	if err := needArgs("crash", args, 1, 3); err != nil {
		return nil, err
	}
	w := s.World()
	from := w.Events.Len()
	var err error
	switch {
	case len(args) == 1:
		err = w.CrashAfter(args[0], 2)
	case args[1] == "now" && len(args) == 2:
		err = w.CrashNow(args[0])
	case args[1] == "after" && len(args) == 3:
		n, perr := strconv.Atoi(args[2])
		if perr != nil {
			return nil, usageErr("crash", "after %q: N is a number of records", args[2])
		}
		err = w.CrashAfter(args[0], n)
	default:
		return nil, usageErr("crash", "%q: want now, or after N", strings.Join(args[1:], " "))
	}
	if err != nil {
		return nil, err
	}
	s.narrate(w, from)
	if len(args) == 1 || args[1] == "after" {
		n := "2"
		if len(args) == 3 {
			n = args[2]
		}
		s.say("%s will crash once it has finished %s more record(s)", args[0], n)
	}
	return nil, nil
}

func cmdDrop(s *Session, args []string) (*Result, error) {
	// No upper bound: past the type, a fifth word is one of a kind given
	// before, and parseDropRule says which.
	if err := needArgs("drop", args, 1, len(args)); err != nil {
		return nil, err
	}
	var api sim.API
	var names []string
	for _, a := range sim.APIs {
		names = append(names, string(a))
		if strings.EqualFold(string(a), args[0]) {
			api = a
		}
	}
	if api == "" {
		return nil, usageErr("drop", "no message type %q (types: %s)", args[0], strings.Join(names, " "))
	}
	r, err := parseDropRule(s, api, args[1:])
	if err != nil {
		return nil, err
	}
	// Every packet sent is checked against each rule pending.
	if n := len(s.World().PendingDrops()); n >= limitDropRules.max {
		return nil, limitDropRules.checkSum("drop", fmt.Sprintf("%d rules pending + 1", n), n, 1)
	}
	s.World().Drop(r)
	kind, who := "request", ""
	if r.Response {
		kind = "response"
		if r.To != "" {
			who = " to " + r.To
		}
	} else if r.From != "" {
		who = " from " + r.From
	}
	s.say("the next %d %s %s(s)%s will be lost", r.Count, api, kind, who)
	return nil, nil
}

// parseDropRule reads what follows drop's TYPE: a direction, a member and a
// count, in any order, each at most once (two of a kind contradict each
// other, or say one thing twice: either way a typo, and a session file
// should not keep it). A combination the model can never match is refused
// too, or the rule would wait for ever, silently: RebalanceNotification is
// only sent by the coordinator, to a member (a heartbeat's answer drawn as
// its own packet), and WriteTxnMarkers goes from the transaction coordinator
// to the partition leaders, B1 to B1, never to or from a member.
func parseDropRule(s *Session, api sim.API, args []string) (sim.DropRule, error) {
	r := sim.DropRule{Type: api, Count: 1}
	var dir, member, count string
	for _, a := range args {
		switch {
		case a == "request" || a == "response":
			switch {
			case dir == a:
				return r, usageErr("drop", "%s is given twice (give the direction once)", a)
			case dir != "":
				return r, usageErr("drop", "%s and %s contradict each other (give one direction: request or response)", dir, a)
			}
			dir = a
			r.Response = a == "response"
		case strings.HasPrefix(a, "C"):
			switch {
			case member == a:
				return r, usageErr("drop", "%s is given twice (give the member once)", a)
			case member != "":
				return r, usageErr("drop", "%s and %s contradict each other (give one member, or none to match any)", member, a)
			}
			if s.World().Member(a) == nil {
				return r, fmt.Errorf("drop: no member %s (members: %s)", a, strings.Join(liveClients(s), " "))
			}
			member = a
		default:
			n, err := parseCount("drop", "N", a, 1, 1000)
			if err != nil {
				return r, err
			}
			if count != "" {
				return r, usageErr("drop", "N is given twice (%s and %s; give one count)", count, a)
			}
			count = a
			r.Count = n
		}
	}
	switch {
	case api == sim.RebalanceNotification && dir != "response":
		return r, usageErr("drop", "a RebalanceNotification is never a request: the coordinator sends it to a member, "+
			"as the answer to a heartbeat (say drop RebalanceNotification response [Cn] [N])")
	case api == sim.WriteTxnMarkers && member != "":
		return r, usageErr("drop", "WriteTxnMarkers never goes to or from %s: the transaction coordinator sends the markers "+
			"to the partition leaders, %s to %s (give no member)", member, sim.Broker, sim.Broker)
	}
	// For a request the member is the sender, for a response the receiver.
	if r.Response {
		r.To = member
	} else {
		r.From = member
	}
	return r, nil
}
