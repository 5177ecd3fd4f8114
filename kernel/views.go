package kernel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/health"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func jsonLine(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// describeJSON is the shape SPEC §6 fixes for `describe group --json`. A
// consumer group (SPEC §11) adds its epochs after leader and each member's
// epoch and target after its partitions; its generation and leader are
// null, as SPEC §6 writes a missing value. A classic group's line has none
// of the added fields (nil embedded pointers are left out).
type describeJSON struct {
	Group      string  `json:"group"`
	State      string  `json:"state"`
	Generation *int    `json:"generation"`
	Protocol   string  `json:"protocol"`
	Assignor   *string `json:"assignor"`
	Leader     *string `json:"leader"`
	*groupEpochsJSON
	Members   []memberJSON   `json:"members"`
	Offsets   []offsetJSON   `json:"offsets"`
	Rebalance bool           `json:"rebalancing"`
	Paused    []string       `json:"paused_partitions"`
	Extra     map[string]any `json:"coordinator"`
}

type groupEpochsJSON struct {
	GroupEpoch      int `json:"group_epoch"`
	AssignmentEpoch int `json:"assignment_epoch"`
}

type memberJSON struct {
	MemberID   string   `json:"member_id"`
	ClientID   string   `json:"client_id"`
	InstanceID *string  `json:"instance_id"`
	Partitions []string `json:"partitions"`
	*memberEpochJSON
}

// memberEpochJSON is what a consumer group's member adds.
type memberEpochJSON struct {
	MemberEpoch int      `json:"member_epoch"`
	Target      []string `json:"target"`
	// MemberState is the reconciliation state (STABLE,
	// UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS).
	MemberState string   `json:"member_state"`
	Revoking    []string `json:"revoking"`
	// Upgraded is Kafka's MemberDescription.upgraded: false for a
	// classic-protocol member inside the consumer group.
	Upgraded bool `json:"upgraded"`
}

type offsetJSON struct {
	Partition     string  `json:"partition"`
	CurrentOffset *int    `json:"current_offset"`
	LogEndOffset  int     `json:"log_end_offset"`
	Lag           int     `json:"lag"`
	ClientID      *string `json:"client_id"`
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func tpNames(tps []sim.TopicPartition) []string {
	out := make([]string, 0, len(tps))
	for _, tp := range tps {
		out = append(out, tp.String())
	}
	return out
}

// membersInOrder is the group's members as views list them: by member id
// in natural order (C2-1 before C10-1), where the coordinator keeps Kafka's
// string order.
func membersInOrder(d sim.GroupDescription) []sim.GroupMember {
	ms := append([]sim.GroupMember(nil), d.Members...)
	sort.SliceStable(ms, func(i, j int) bool { return natural.Less(ms[i].MemberID, ms[j].MemberID) })
	return ms
}

// owner finds which coordinator member holds tp in the generation.
func owner(d sim.GroupDescription, tp sim.TopicPartition) *sim.GroupMember {
	for i, gm := range d.Members {
		for _, t := range gm.Assignment {
			if t == tp {
				return &d.Members[i]
			}
		}
	}
	return nil
}

func cmdDescribe(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("describe", args, nil, []string{"--members", "--verbose", "--state", "--json"})
	if err != nil {
		return nil, err
	}
	switch {
	case len(pos) == 0:
		return nil, usageErr("describe", "describe what? (only: group)")
	case pos[0] != "group":
		return nil, usageErr("describe", "describe %q: only group can be described", pos[0])
	case len(pos) > 1:
		return nil, usageErr("describe", "unexpected %q after group (kgrepl simulates one group)", pos[1])
	}
	// Two views at once are refused, as kafka-consumer-groups.sh does
	// (ConsumerGroupCommandOptions.checkArgs: --describe takes at most one
	// of --members, --offsets, --state); the offsets view is the default.
	if fl["--members"] == "true" && fl["--state"] == "true" {
		return nil, usageErr("describe", "describe takes at most one of --members, --state (the offsets view is the default)")
	}
	w := s.World()
	g := w.Group.Describe()
	if g.Type == sim.ConsumerGroup {
		return describeConsumerGroup(w, g, fl)
	}
	rebalancing := g.State == sim.PreparingRebalance || g.State == sim.CompletingRebalance
	if fl["--json"] == "true" {
		gen := g.Generation
		d := describeJSON{Group: g.ID, State: string(g.State), Generation: &gen, Protocol: "classic",
			Assignor: strPtr(g.Assignor), Members: []memberJSON{}, Rebalance: rebalancing,
			Paused: tpNames(w.PausedPartitions())}
		if gm := g.Member(g.Leader); gm != nil {
			d.Leader = strPtr(gm.ClientID)
		}
		for _, gm := range membersInOrder(g) {
			d.Members = append(d.Members, memberJSON{MemberID: gm.MemberID, ClientID: gm.ClientID,
				InstanceID: strPtr(gm.InstanceID), Partitions: tpNames(gm.Assignment)})
		}
		d.Offsets = offsetRows(w, g, !rebalancing)
		d.Extra = map[string]any{"coordinator": sim.Broker, "pending_transactional_offsets": pendingList(w)}
		line := jsonLine(d)
		return &Result{Text: line, JSON: line}, nil
	}
	var header string
	if rebalancing {
		header = fmt.Sprintf("Consumer group '%s' is rebalancing (%s, generation %d).\n\n", g.ID, g.State, g.Generation)
	}
	if len(g.Members) == 0 && g.State == sim.Empty {
		header = fmt.Sprintf("Consumer group '%s' has no active members.\n\n", g.ID)
	}
	var t *Table
	switch {
	case fl["--state"] == "true":
		t = &Table{Header: []string{"GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GENERATION", "#MEMBERS"}}
		t.Add(g.ID, sim.Broker+" (1)", dash(g.Assignor), string(g.State), strconv.Itoa(g.Generation), strconv.Itoa(len(g.Members)))
	case fl["--members"] == "true":
		h := []string{"GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"}
		if fl["--verbose"] == "true" {
			h = append(h, "ASSIGNMENT")
		}
		t = &Table{Header: h}
		for _, gm := range membersInOrder(g) {
			row := []string{g.ID, gm.MemberID, dash(gm.InstanceID), "/" + gm.ClientID, gm.ClientID, strconv.Itoa(len(gm.Assignment))}
			if fl["--verbose"] == "true" {
				row = append(row, assignmentText(gm.Assignment))
			}
			t.Add(row...)
		}
	default:
		t = offsetsTable(w, g, !rebalancing)
	}
	return &Result{Text: header + t.Text(), Table: t, HTML: t.HTML()}, nil
}

// offsetsTable is describe group's default view: each input partition's
// committed offset, log end, lag and, when owners is set, the member whose
// current assignment holds it.
func offsetsTable(w *sim.World, g sim.GroupDescription, owners bool) *Table {
	t := &Table{Header: []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"}}
	for _, tp := range w.Layout().Inputs() {
		cur := "-"
		if rec, ok := w.Group.Offsets.Committed(tp); ok {
			cur = strconv.Itoa(rec.Offset)
		}
		cid, host, client := "-", "-", "-"
		if gm := owner(g, tp); gm != nil && owners {
			cid, host, client = gm.MemberID, "/"+gm.ClientID, gm.ClientID
		}
		t.Add(g.ID, tp.Topic, strconv.Itoa(tp.Partition), cur, strconv.Itoa(w.Log(tp).HW()), strconv.Itoa(w.Lag(tp)), cid, host, client)
	}
	return t
}

// offsetRows is offsetsTable for describe group --json.
func offsetRows(w *sim.World, g sim.GroupDescription, owners bool) []offsetJSON {
	out := []offsetJSON{}
	for _, tp := range w.Layout().Inputs() {
		o := offsetJSON{Partition: tp.String(), LogEndOffset: w.Log(tp).HW(), Lag: w.Lag(tp)}
		if rec, ok := w.Group.Offsets.Committed(tp); ok {
			off := rec.Offset
			o.CurrentOffset = &off
		}
		if gm := owner(g, tp); gm != nil && owners {
			o.ClientID = strPtr(gm.ClientID)
		}
		out = append(out, o)
	}
	return out
}

// assignmentText is Kafka's --verbose spelling: orders(0,1),payments(0).
func assignmentText(tps []sim.TopicPartition) string {
	if len(tps) == 0 {
		return "-"
	}
	var parts []string
	var cur string
	var nums []string
	flush := func() {
		if cur != "" {
			parts = append(parts, cur+"("+strings.Join(nums, ",")+")")
		}
	}
	for _, tp := range tps {
		if tp.Topic != cur {
			flush()
			cur, nums = tp.Topic, nil
		}
		nums = append(nums, strconv.Itoa(tp.Partition))
	}
	flush()
	return strings.Join(parts, ",")
}

func pendingList(w *sim.World) []string {
	var out []string
	for _, tp := range w.Layout().Inputs() {
		if w.Group.Offsets.HasPending(tp) {
			out = append(out, tp.String())
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func cmdOffsets(s *Session, args []string) (*Result, error) {
	if err := needArgs("offsets", args, 0, 0); err != nil {
		return nil, err
	}
	w := s.World()
	t := &Table{Header: []string{"TICK", "KEY", "VALUE", "STATE"}}
	for _, r := range w.Group.Offsets.Log.All() {
		if r.Marker {
			t.Add(strconv.Itoa(r.Tick), "control", fmt.Sprintf("%s marker, producerId=%d", r.State, r.PID), r.State)
			continue
		}
		val := fmt.Sprintf("offset=%d generation=%d member=%s", r.Offset, r.Generation, r.MemberID)
		if r.PID >= 0 {
			val += fmt.Sprintf(" producerId=%d", r.PID)
		}
		t.Add(strconv.Itoa(r.Tick), fmt.Sprintf("[%s,%s,%d]", r.Group, r.TP.Topic, r.TP.Partition), val, r.State)
	}
	text := "__consumer_offsets (group " + w.Group.ID() + ")\n"
	if len(t.Rows) == 0 {
		text += "no records yet\n"
	} else {
		text += t.Text()
	}
	return &Result{Text: text, Table: t, HTML: t.HTML()}, nil
}

// aroundRows is how many rows `log --around OFFSET` shows on each side.
const aroundRows = 4

func cmdLog(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("log", args, []string{"--from", "--around"}, nil)
	if err != nil {
		return nil, err
	}
	if err := needArgs("log", pos, 1, 1); err != nil {
		return nil, err
	}
	w := s.World()
	tp, err := w.Layout().ParsePartition(pos[0])
	if err != nil {
		return nil, fmt.Errorf("log: %v", err)
	}
	l := w.Log(tp)
	from, to, err := logRows(pos[0], fl, l.HW())
	if err != nil {
		return nil, err
	}
	t := &Table{Header: []string{"OFFSET", "VALUE", "PRODUCER", "PID", "EPOCH", "SEQ", "TXN", "READ_COMMITTED"}}
	for i, c := range l.Cells.Slice(from, to) {
		i += from
		pid, epoch, seq := "-", "-", "-"
		if c.PID >= 0 {
			pid, epoch = strconv.FormatInt(c.PID, 10), strconv.Itoa(c.Epoch)
		}
		if c.Seq >= 0 {
			seq = strconv.Itoa(c.Seq)
		}
		val := c.Value
		state := c.Txn.String()
		if c.Txn == sim.TxnAborted && c.IsData() {
			val += " ✗"
		}
		if !c.IsData() {
			state = "marker"
		}
		rc := "no"
		if l.ReadCommitted(i) {
			rc = "yes"
		}
		t.Add(strconv.Itoa(i), val, dash(c.Producer), pid, epoch, seq, state, rc)
	}
	head := fmt.Sprintf("%s  HW %d  LSO %d", tp, l.HW(), l.LSO())
	if rec, ok := w.Group.Offsets.Committed(tp); ok {
		head += fmt.Sprintf("  committed %d (%s, generation %d)", rec.Offset, rec.MemberID, rec.Generation)
	}
	if from > 0 || to < l.HW() {
		switch {
		case from == to:
			head += fmt.Sprintf("  (no rows from offset %d)", from)
		default:
			head += fmt.Sprintf("  (offsets %d..%d of 0..%d)", from, to-1, l.HW()-1)
		}
	}
	if len(l.Aborted) > 0 {
		var ab []string
		for _, a := range l.Aborted {
			ab = append(ab, fmt.Sprintf("pid %d offsets %d..%d", a.PID, a.First, a.Last))
		}
		head += "\naborted transaction index: " + strings.Join(ab, "; ")
	}
	return &Result{Text: head + "\n" + t.Text(), Table: t, HTML: t.HTML()}, nil
}

// logRows is the offsets [from, to) a log view shows: all of them, from
// --from N to the end, or --around OFFSET's aroundRows on each side.
func logRows(part string, fl map[string]string, hw int) (from, to int, err error) {
	f, hasFrom := fl["--from"]
	a, hasAround := fl["--around"]
	switch {
	case hasFrom && hasAround:
		return 0, 0, usageErr("log", "--from and --around contradict each other (give one)")
	case hasFrom:
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return 0, 0, usageErr("log", "--from %q is not an offset (a whole number from 0 to the HW, %d)", f, hw)
		}
		if n > hw {
			return 0, 0, fmt.Errorf("log %s --from %d: past the end of the log (HW %d: offsets 0..%d; --from at most %d)", part, n, hw, hw-1, hw)
		}
		return n, hw, nil
	case hasAround:
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			return 0, 0, usageErr("log", "--around %q is not an offset (a whole number from 0 to %d)", a, hw-1)
		}
		if n >= hw {
			if hw == 0 {
				return 0, 0, fmt.Errorf("log %s --around %d: the log is empty (HW 0)", part, n)
			}
			return 0, 0, fmt.Errorf("log %s --around %d: no such offset (HW %d: offsets 0..%d)", part, n, hw, hw-1)
		}
		return max(0, n-aroundRows), min(hw, n+aroundRows+1), nil
	}
	return 0, hw, nil
}

func cmdTxn(s *Session, args []string) (*Result, error) {
	if err := needArgs("txn", args, 0, 1); err != nil {
		return nil, err
	}
	w := s.World()
	entries := w.Txn.Entries()
	if len(args) == 1 {
		e := w.Txn.Entry(args[0])
		if e == nil {
			var ids []string
			for _, e := range entries {
				ids = append(ids, e.TransactionalID)
			}
			return nil, fmt.Errorf("txn %s: no transactional.id %s (known: %s)", args[0], args[0], dash(strings.Join(ids, " ")))
		}
		entries = []*sim.TxnEntry{e}
	}
	t := &Table{Header: []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationTimeMs", "TopicPartitions"}}
	for _, e := range entries {
		start, dur := "None", "None"
		if e.Start >= 0 {
			start, dur = strconv.Itoa(e.Start), strconv.Itoa(w.Tick-e.Start)
		}
		parts := tpNames(e.Partitions)
		if e.Group != "" {
			parts = append(parts, "__consumer_offsets("+e.Group+")")
		}
		t.Add("1", e.TransactionalID, strconv.FormatInt(e.PID, 10), strconv.Itoa(e.Epoch), string(e.State),
			strconv.Itoa(e.Timeout), start, dur, dash(strings.Join(parts, ",")))
	}
	if len(entries) == 0 {
		return &Result{Text: "no transactional producers yet (set producer transactional)"}, nil
	}
	// kafka-transactions.sh's columns make a 190-column line: a field per
	// line when it does not fit; notebooks get the table.
	text := t.Fit(textWidth)
	if text != t.Text() {
		return &Result{Text: text, HTML: t.HTML()}, nil
	}
	return &Result{Text: text, Table: t, HTML: t.HTML()}, nil
}

type consumeJSON struct {
	Topic     string       `json:"topic"`
	Isolation string       `json:"isolation"`
	Records   []recordJSON `json:"records"`
}

type recordJSON struct {
	Partition string `json:"partition"`
	Offset    int    `json:"offset"`
	Value     string `json:"value"`
	Aborted   bool   `json:"aborted"`
	Open      bool   `json:"open"`
	// Invoice numbers the invoices of one input record as this reader
	// meets them (output topic only): 2 and up are duplicates.
	Invoice int `json:"invoice,omitempty"`
}

func cmdConsume(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("consume", args, []string{"--isolation"}, []string{"--json"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("consume", pos, 1, 1); err != nil {
		return nil, err
	}
	w := s.World()
	if !w.Layout().HasTopic(pos[0]) {
		return nil, fmt.Errorf("consume %s: no topic %s (topics: %s)", pos[0], pos[0], strings.Join(topicList(w), " "))
	}
	iso := w.Cfg.Isolation
	if v, ok := fl["--isolation"]; ok {
		if v != "read_committed" && v != "read_uncommitted" {
			return nil, usageErr("consume", "--isolation %q is not read_committed or read_uncommitted", v)
		}
		iso = v
	}
	recs := w.ReadTopic(pos[0], iso)
	// The n-th invoice of an input record, as this reader meets them (as
	// sim.World.Delivery counts duplicates).
	nth := make([]int, len(recs))
	seen := map[string]int{}
	for i, r := range recs {
		if r.Source != "" {
			seen[r.Source]++
			nth[i] = seen[r.Source]
		}
	}
	if fl["--json"] == "true" {
		out := consumeJSON{Topic: pos[0], Isolation: iso, Records: []recordJSON{}}
		for i, r := range recs {
			out.Records = append(out.Records, recordJSON{Partition: r.Partition.String(), Offset: r.Offset, Value: r.Value, Aborted: r.Aborted, Open: r.Open, Invoice: nth[i]})
		}
		line := jsonLine(out)
		return &Result{Text: line, JSON: line}, nil
	}
	t := &Table{Header: []string{"PARTITION", "OFFSET", "VALUE", "NOTE"}}
	for i, r := range recs {
		var notes []string
		switch {
		case r.Aborted:
			notes = append(notes, "aborted ✗")
		case r.Open:
			notes = append(notes, "open transaction")
		}
		if nth[i] > 1 {
			notes = append(notes, fmt.Sprintf("duplicate ×%d (invoice %d of %s)", nth[i], nth[i], r.Source))
		}
		note := strings.Join(notes, " · ")
		t.Add(r.Partition.String(), strconv.Itoa(r.Offset), r.Value, note)
	}
	head := fmt.Sprintf("%s at %s: %d record(s)", pos[0], iso, len(recs))
	if pos[0] == w.Topo.Output.Name {
		c := w.Delivery(iso)
		head += fmt.Sprintf("; duplicates %d%s; lost %d%s", c.Duplicates, nameList(c.DuplicateNames), c.Lost, nameList(c.LostNames))
		if c.HeldBack > 0 {
			head += fmt.Sprintf("; held back by the LSO %d%s", c.HeldBack, nameList(c.HeldBackNames))
		}
	}
	return &Result{Text: head + "\n" + t.Text(), Table: t, HTML: t.HTML()}, nil
}

func nameList(names []string) string {
	if len(names) == 0 {
		return ""
	}
	if len(names) > 12 {
		return " (" + strings.Join(names[:12], " ") + " ...)"
	}
	return " (" + strings.Join(names, " ") + ")"
}

func topicList(w *sim.World) []string {
	var out []string
	for _, t := range w.Topo.Inputs {
		out = append(out, t.Name)
	}
	return append(out, w.Topo.Output.Name)
}

type packetJSON struct {
	Sent      int     `json:"sent"`
	Delivered *int    `json:"delivered"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Type      string  `json:"type"`
	Response  bool    `json:"response"`
	Error     *string `json:"error"`
	Summary   string  `json:"summary"`
	Lost      bool    `json:"lost"`
}

func cmdTrace(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("trace", args, []string{"--type", "--member"}, []string{"--json", "--events"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("trace", pos, 0, 1); err != nil {
		return nil, err
	}
	w := s.World()
	last := 0
	if len(pos) == 1 {
		if last, err = parseCount("trace", "N", pos[0], 1, 100_000_000); err != nil {
			return nil, err
		}
	}
	pkts, err := filterPackets(w, fl["--type"], fl["--member"], last)
	if err != nil {
		return nil, err
	}
	if fl["--events"] == "true" {
		if err := limitTraceRows.checkf("trace --events", w.Events.Len(), fmt.Sprintf("%d events", w.Events.Len())); err != nil {
			return nil, err
		}
	}
	if fl["--json"] == "true" {
		out := struct {
			Packets []packetJSON `json:"packets"`
			// With --events, the events too (absent without it, so the
			// contract's shape is unchanged).
			Events *[]eventJSON `json:"events,omitempty"`
		}{Packets: []packetJSON{}}
		if fl["--events"] == "true" {
			evs := []eventJSON{}
			for _, e := range w.Events.All() {
				m := &e.Member
				if e.Member == "" {
					m = nil // the coordinator's
				}
				evs = append(evs, eventJSON{Tick: e.Tick, Kind: string(e.Kind), Member: m, Text: e.Text, Stop: e.Stop})
			}
			out.Events = &evs
		}
		for _, p := range pkts {
			pj := packetJSON{Sent: p.Sent, From: p.From, To: p.To, Type: string(p.Type), Response: p.Response, Summary: p.Summary, Lost: p.Lost}
			if p.Delivered >= 0 {
				d := p.Delivered
				pj.Delivered = &d
			}
			if p.Error != sim.None {
				e := p.Error.String()
				pj.Error = &e
			}
			out.Packets = append(out.Packets, pj)
		}
		line := jsonLine(out)
		return &Result{Text: line, JSON: line}, nil
	}
	t := &Table{Header: []string{"SENT", "DELIVERED", "FROM", "TO", "TYPE", "ERROR", "DETAIL"}}
	for _, p := range pkts {
		del := "in flight"
		if p.Lost {
			del = "lost"
		} else if p.Delivered >= 0 {
			del = strconv.Itoa(p.Delivered)
		}
		typ := string(p.Type)
		if p.Response && p.Type != sim.RebalanceNotification {
			typ += " response"
		}
		errs := "-"
		if p.Error != sim.None {
			errs = fmt.Sprintf("%s (%d)", p.Error, int(p.Error))
		}
		t.Add(strconv.Itoa(p.Sent), del, p.From, p.To, typ, errs, p.Summary)
	}
	text := t.Text()
	if fl["--events"] == "true" {
		var b strings.Builder
		for _, e := range w.Events.All() {
			fmt.Fprintf(&b, "t=%-4d %s\n", e.Tick, e.Text)
		}
		text += "\nevents:\n" + b.String()
	}
	return &Result{Text: text, Table: t, HTML: t.HTML()}, nil
}

// eventJSON is one event in trace --events --json.
type eventJSON struct {
	Tick   int     `json:"tick"`
	Kind   string  `json:"kind"`
	Member *string `json:"member"` // a client id; null for the coordinator
	Text   string  `json:"text"`
	Stop   bool    `json:"stop"`
}

// filterPackets keeps the packets of the named types (comma-separated) to
// or from a member, the last `last` of them (0: all); empty filters keep
// everything. What it keeps is counted against limitTraceRows before any
// packet is made: a trace is kept as compact records, and a view of every
// packet of a long run would build each one.
func filterPackets(w *sim.World, types, member string, last int) ([]*sim.Packet, error) {
	want := map[sim.API]bool{}
	if types != "" {
		for _, t := range strings.Split(types, ",") {
			found := false
			for _, a := range sim.APIs {
				if strings.EqualFold(string(a), t) {
					want[a], found = true, true
				}
			}
			if !found {
				var names []string
				for _, a := range sim.APIs {
					names = append(names, string(a))
				}
				return nil, fmt.Errorf("trace --type: no message type %q (types: %s)", t, strings.Join(names, " "))
			}
		}
	}
	if member != "" && w.Member(member) == nil {
		return nil, fmt.Errorf("trace --member: no member %s (members: %s)", member, strings.Join(natural.Sorted(w.Clients()), " "))
	}
	keep := func(n int) error {
		return limitTraceRows.checkf("trace", n, fmt.Sprintf("%d messages (trace N shows the last N; --type and --member narrow it)", n))
	}
	if len(want) == 0 && member == "" {
		from := 0
		if n := w.Packets.Len(); last > 0 && last < n {
			from = n - last
		}
		if err := keep(w.Packets.Len() - from); err != nil {
			return nil, err
		}
		return w.Packets.Slice(from, w.Packets.Len()), nil
	}
	var idx []int
	for i, p := range w.Packets.Headers(0) {
		if len(want) > 0 && !want[p.Type] {
			continue
		}
		if member != "" && p.From != member && p.To != member {
			continue
		}
		idx = append(idx, i)
	}
	if last > 0 && last < len(idx) {
		idx = idx[len(idx)-last:]
	}
	if err := keep(len(idx)); err != nil {
		return nil, err
	}
	out := make([]*sim.Packet, len(idx))
	for j, i := range idx {
		out[j] = w.Packets.At(i)
	}
	return out, nil
}

type metricsJSON struct {
	Tick                int         `json:"tick"`
	Generation          int         `json:"generation"`
	Rebalances          int         `json:"rebalances"`
	PausePartitionTicks int         `json:"pause_partition_ticks"`
	Processed           int         `json:"processed"`
	Duplicates          int         `json:"duplicates"`
	Lost                int         `json:"lost"`
	Pauses              []pauseJSON `json:"pauses"`
	Isolation           string      `json:"isolation"`
	DuplicatesRC        int         `json:"duplicates_read_committed"`
	DuplicatesRU        int         `json:"duplicates_read_uncommitted"`
	LostRC              int         `json:"lost_read_committed"`
	LostRU              int         `json:"lost_read_uncommitted"`
	DuplicateRecords    []string    `json:"duplicate_records"`
	LostRecords         []string    `json:"lost_records"`
	HeldBack            int         `json:"held_back_by_lso"`
	LSOHeldTicks        int         `json:"lso_held_partition_ticks"`
	ZombieWrites        int         `json:"zombie_writes"`
	TxnAborted          int         `json:"transactions_aborted"`
	TxnTimedOut         int         `json:"transactions_timed_out"`
	Fenced              int         `json:"fenced_requests"`
	SinkDuplicates      int         `json:"external_sink_duplicates"`
	Lag                 int         `json:"lag"`
	// A consumer group (KIP-848) has no generation: generation, rebalances
	// and each pause's generation are counted by group epoch, and these
	// two say so. A classic group's line does not have them.
	Protocol   string `json:"protocol,omitempty"`
	GroupEpoch *int   `json:"group_epoch,omitempty"`
	// Unavailability by cause, the most lag and the health at the end
	// (kernel/health: compare and explore show the same).
	health.Summary
}

type pauseJSON struct {
	Generation     int      `json:"generation"`
	Partitions     []string `json:"partitions"`
	PartitionTicks int      `json:"partition_ticks"`
}

func buildMetrics(w *sim.World) metricsJSON {
	iso := w.Cfg.Isolation
	c := w.Delivery(iso)
	rc, ru := w.Delivery("read_committed"), w.Delivery("read_uncommitted")
	m := metricsJSON{Tick: w.Tick, Generation: generationOf(w.Group), Rebalances: w.Group.RebalanceStarts,
		PausePartitionTicks: w.Meter.Total, Processed: w.Processed(), Duplicates: c.Duplicates, Lost: c.Lost,
		Pauses: []pauseJSON{}, Isolation: iso, DuplicatesRC: rc.Duplicates, DuplicatesRU: ru.Duplicates,
		LostRC: rc.Lost, LostRU: ru.Lost, DuplicateRecords: nonNil(natural.Sorted(c.DuplicateNames)), LostRecords: nonNil(natural.Sorted(c.LostNames)), HeldBack: c.HeldBack, LSOHeldTicks: w.LSOHeldTicks, ZombieWrites: w.ZombieWrites(),
		TxnAborted: w.Txn.Aborted, TxnTimedOut: w.Txn.TimedOut, Summary: health.Of(w)}
	if w.Group.Type() == sim.ConsumerGroup {
		m.Protocol = string(sim.ConsumerGroup)
		e := w.Group.Describe().GroupEpoch
		m.GroupEpoch = &e
	}
	for _, p := range w.Packets.Headers(0) {
		if p.Error == sim.ProducerFenced || p.Error == sim.InvalidProducerEpoch || p.Error == sim.FencedInstanceID {
			m.Fenced++
		}
	}
	for _, n := range w.Sink.All() {
		if n > 1 {
			m.SinkDuplicates += n - 1
		}
	}
	for _, tp := range w.Layout().Inputs() {
		m.Lag += w.Lag(tp)
	}
	for _, e := range w.Meter.Entries {
		m.Pauses = append(m.Pauses, pauseJSON{Generation: e.Generation, Partitions: tpNames(e.Partitions), PartitionTicks: e.PartitionTicks})
	}
	return m
}

// unavailableSum is the unavailability as the sum of its causes:
// "196 = rebalance 168 + owner down 28 + unassigned 0 + stopped 0".
func unavailableSum(s health.Summary) string {
	parts := []string{strconv.Itoa(s.Unavailable)}
	for i, c := range sim.Causes {
		sep := " = "
		if i > 0 {
			sep = " + "
		}
		parts = append(parts, fmt.Sprintf("%s%s %d", sep, health.CauseName(c), s.ByCause[c.String()]))
	}
	return strings.Join(parts, "")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func cmdMetrics(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("metrics", args, nil, []string{"--json"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("metrics", pos, 0, 0); err != nil {
		return nil, err
	}
	w := s.World()
	m := buildMetrics(w)
	if fl["--json"] == "true" {
		line := jsonLine(m)
		return &Result{Text: line, JSON: line}, nil
	}
	t := &Table{Header: []string{"METRIC", "VALUE"}}
	t.Add("tick", strconv.Itoa(m.Tick))
	consumer := w.Group.Type() == sim.ConsumerGroup
	if consumer {
		t.Add("group epoch (group.protocol=consumer)", strconv.Itoa(m.Generation))
	} else {
		t.Add("generation", strconv.Itoa(m.Generation))
	}
	t.Add("rebalances", strconv.Itoa(m.Rebalances))
	t.Add("pause meter ("+health.Unit+")", strconv.Itoa(m.PausePartitionTicks))
	t.Add("unavailable ("+health.Unit+")", unavailableSum(m.Summary))
	t.Add("records processed", strconv.Itoa(m.Processed))
	t.Add("duplicates ("+m.Isolation+")", strconv.Itoa(m.Duplicates)+nameList(m.DuplicateRecords))
	t.Add("lost ("+m.Isolation+")", strconv.Itoa(m.Lost)+nameList(m.LostRecords))
	t.Add("duplicates read_committed / read_uncommitted", fmt.Sprintf("%d / %d", m.DuplicatesRC, m.DuplicatesRU))
	t.Add("held back by the LSO (read_committed)", strconv.Itoa(m.HeldBack))
	t.Add("ticks the LSO held readers back (partition x ticks)", strconv.Itoa(m.LSOHeldTicks))
	t.Add("zombie writes", strconv.Itoa(m.ZombieWrites))
	t.Add("transactions aborted (timed out)", fmt.Sprintf("%d (%d)", m.TxnAborted, m.TxnTimedOut))
	t.Add("fenced requests", strconv.Itoa(m.Fenced))
	t.Add("external sink duplicates", strconv.Itoa(m.SinkDuplicates))
	t.Add("total lag", strconv.Itoa(m.Lag))
	t.Add("most lag (records)", m.LagLine())
	t.Add("members running", fmt.Sprintf("%d of %d", len(m.Health.Running), m.Health.Members))
	t.Add("health", m.Health.Words)
	text := t.Text()
	if len(m.Pauses) > 0 {
		pt := &Table{Header: []string{"GENERATION", "PAUSED", "PARTITION-TICKS"}}
		title := "pauses per rebalance"
		if consumer {
			pt.Header[0] = "GROUP-EPOCH"
			title = "pauses per rebalance (group epoch)"
		}
		for _, p := range w.Meter.Entries {
			pt.Add(strconv.Itoa(p.Generation), strconv.Itoa(len(p.Partitions))+" "+w.Layout().PartList(p.Partitions), strconv.Itoa(p.PartitionTicks))
		}
		text += "\n" + title + ":\n" + pt.Text()
	}
	return &Result{Text: text, Table: t, HTML: t.HTML()}, nil
}

func cmdMembers(s *Session, args []string) (*Result, error) {
	if err := needArgs("members", args, 0, 0); err != nil {
		return nil, err
	}
	w := s.World()
	t := &Table{Header: []string{"CLIENT", "PROCESS", "MEMBER-ID", "GEN", "PHASE", "LOOP", "OWNS", "BATCH", "NOTE"}}
	if w.Group.Type() == sim.ConsumerGroup {
		t.Header[3] = "EPOCH" // a consumer-protocol member's epoch stands where a generation would
	}
	procs := append([]*sim.Member(nil), w.Processes()...)
	// Clients in natural order (C2 before C10), each client's processes in start order.
	sort.SliceStable(procs, func(i, j int) bool { return natural.Less(procs[i].Client, procs[j].Client) })
	for _, m := range procs {
		if !m.Alive && m != w.Member(m.Client) {
			continue
		}
		recs, done := m.Batch()
		batch := "-"
		if len(recs) > 0 {
			batch = fmt.Sprintf("%s (%d done)", strings.Join(recs, " "), done)
		}
		var notes []string
		if !m.Alive {
			notes = append(notes, "not running")
		}
		if m.Zombie {
			notes = append(notes, "zombie")
		}
		if m.Static() {
			notes = append(notes, "static "+m.Cfg.InstanceID)
		}
		notes = append(notes, string(m.Cfg.Producer()))
		t.Add(m.Client, strconv.Itoa(m.Inc), dash(m.MemberID), strconv.Itoa(m.Generation), m.Phase.String(), m.LoopState().String(),
			w.Layout().PartList(m.Owned), batch, strings.Join(notes, ", "))
	}
	return &Result{Text: t.Text(), Table: t, HTML: t.HTML()}, nil
}
