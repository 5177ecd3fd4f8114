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
	*realNameJSON
}

// realNameJSON is what describe group --real-names --json adds to a
// member: the client id and host the imported file gives it (null for a
// member that joined since, which has none).
type realNameJSON struct {
	RealClientID *string `json:"real_client_id"`
	RealHost     *string `json:"real_host"`
}

// naming is how a view names members: kgrepl's client ids, or with
// --real-names the imported group's (describe group --real-names).
type naming struct {
	names *importedNames
	real  bool
}

func (n naming) client(c string) string { return n.names.clientID(c, n.real) }
func (n naming) host(c string) string   { return n.names.host(c, n.real) }

// json is the member's real names for --json, when asked for.
func (n naming) json(c string) *realNameJSON {
	if !n.real {
		return nil
	}
	r := &realNameJSON{}
	if m := n.names.member(c); m != nil {
		r.RealClientID, r.RealHost = &m.clientID, &m.host
	}
	return r
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

// ownerIndex maps each partition to the coordinator's member whose
// assignment holds it in the generation (the first in the description's
// member order, should two claim it), in one pass over the assignments:
// looking each partition up in every member's assignment cost partitions x
// members.
func ownerIndex(d sim.GroupDescription) map[sim.TopicPartition]*sim.GroupMember {
	own := map[sim.TopicPartition]*sim.GroupMember{}
	for i := range d.Members {
		for _, tp := range d.Members[i].Assignment {
			if _, ok := own[tp]; !ok {
				own[tp] = &d.Members[i]
			}
		}
	}
	return own
}

// checkDescribe bounds describe group's rows: a row a partition, and one a
// member. The limits on a world's shape keep them far below the bound
// today; the check holds when those limits grow.
func checkDescribe(w *sim.World, g sim.GroupDescription) error {
	n := len(w.Layout().Inputs()) + len(g.Members)
	return checkRows("describe", n, "partitions and members", "describe group --state shows the group alone")
}

func cmdDescribe(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("describe", args, nil, []string{"--members", "--verbose", "--state", "--json", "--real-names"})
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
	if fl["--state"] != "true" {
		if err := checkDescribe(w, g); err != nil {
			return nil, err
		}
	}
	nm := naming{names: s.importedNames(), real: fl["--real-names"] == "true"}
	if g.Type == sim.ConsumerGroup {
		return describeConsumerGroup(s, w, g, fl, nm)
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
				InstanceID: strPtr(gm.InstanceID), Partitions: tpNames(gm.Assignment), realNameJSON: nm.json(gm.ClientID)})
		}
		if d.Offsets, err = offsetRows(s, w, g, !rebalancing); err != nil {
			return nil, err
		}
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
			row := []string{g.ID, gm.MemberID, dash(gm.InstanceID), nm.host(gm.ClientID), nm.client(gm.ClientID), strconv.Itoa(len(gm.Assignment))}
			if fl["--verbose"] == "true" {
				row = append(row, assignmentText(gm.Assignment))
			}
			t.Add(row...)
		}
	default:
		if t, err = offsetsTable(s, w, g, !rebalancing, nm); err != nil {
			return nil, err
		}
	}
	return &Result{Text: header + t.Text(), Table: t, HTML: t.HTML()}, nil
}

// offsetsTable is describe group's default view: each input partition's
// committed offset, log end, lag and, when owners is set, the member whose
// current assignment holds it.
func offsetsTable(s *Session, w *sim.World, g sim.GroupDescription, owners bool, nm naming) (*Table, error) {
	own := ownerIndex(g)
	t := &Table{Header: []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"}}
	for i, tp := range w.Layout().Inputs() {
		if err := s.pollRow("describe", i); err != nil {
			return nil, err
		}
		cur := "-"
		if rec, ok := w.Group.Offsets.Committed(tp); ok {
			cur = strconv.Itoa(rec.Offset)
		}
		cid, host, client := "-", "-", "-"
		if gm := own[tp]; gm != nil && owners {
			cid, host, client = gm.MemberID, nm.host(gm.ClientID), nm.client(gm.ClientID)
		}
		t.Add(g.ID, tp.Topic, strconv.Itoa(tp.Partition), cur, strconv.Itoa(w.Log(tp).HW()), strconv.Itoa(w.Lag(tp)), cid, host, client)
	}
	return t, nil
}

// offsetRows is offsetsTable for describe group --json.
func offsetRows(s *Session, w *sim.World, g sim.GroupDescription, owners bool) ([]offsetJSON, error) {
	own := ownerIndex(g)
	out := []offsetJSON{}
	for i, tp := range w.Layout().Inputs() {
		if err := s.pollRow("describe", i); err != nil {
			return nil, err
		}
		o := offsetJSON{Partition: tp.String(), LogEndOffset: w.Log(tp).HW(), Lag: w.Lag(tp)}
		if rec, ok := w.Group.Offsets.Committed(tp); ok {
			off := rec.Offset
			o.CurrentOffset = &off
		}
		if gm := own[tp]; gm != nil && owners {
			o.ClientID = strPtr(gm.ClientID)
		}
		out = append(out, o)
	}
	return out, nil
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
	pos, fl, err := flags("offsets", args, listFlags, nil)
	if err != nil {
		return nil, err
	}
	if err := needArgs("offsets", pos, 0, 0); err != nil {
		return nil, err
	}
	lw, err := parseWindow("offsets", fl, "TICK")
	if err != nil {
		return nil, err
	}
	w := s.World()
	log := w.Group.Offsets.Log
	lo, hi := lw.rows(log.Len(), func(t int) int {
		return firstAtOrAfter(log.Len(), t, func(i int) int { return log.At(i).Tick })
	})
	if err := checkRows("offsets", hi-lo, "records of __consumer_offsets", "offsets --last N shows the last N, --from TICK those from a tick on"); err != nil {
		return nil, err
	}
	// In real time a record's tick reads as its time, the tick beside it.
	clk := clockOf(w)
	col := "TICK"
	if clk.real {
		col = "TIME (TICK)"
	}
	text, t, err := s.render("offsets", hi-lo, []string{col, "KEY", "VALUE", "STATE"}, func(emit func(...string) error) error {
		for i := lo; i < hi; i++ {
			r := log.At(i)
			if r.Marker {
				if err := emit(clk.cell(r.Tick), "control", fmt.Sprintf("%s marker, producerId=%d", r.State, r.PID), r.State); err != nil {
					return err
				}
				continue
			}
			val := fmt.Sprintf("offset=%d generation=%d member=%s", r.Offset, r.Generation, r.MemberID)
			if r.PID >= 0 {
				val += fmt.Sprintf(" producerId=%d", r.PID)
			}
			if err := emit(clk.cell(r.Tick), fmt.Sprintf("[%s,%s,%d]", r.Group, r.TP.Topic, r.TP.Partition), val, r.State); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	head := "__consumer_offsets (group " + w.Group.ID() + ")\n"
	switch {
	case log.Len() == 0:
		text = head + "no records yet\n"
	case hi == lo:
		text = head + fmt.Sprintf("no records from %s on\n", clk.tickAt(lw.from))
	default:
		text = head + text
	}
	return &Result{Text: text, Table: t, HTML: tableHTML(t)}, nil
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
	// The aborted transaction index: all of it, or in a view of some of
	// the log (--from, --around) the transactions that reach its rows.
	narrowed := from > 0 || to < l.HW()
	var aborted []string
	for _, a := range l.Aborted {
		if !narrowed || a.Last >= from && a.First < to {
			aborted = append(aborted, fmt.Sprintf("pid %d offsets %d..%d", a.PID, a.First, a.Last))
		}
		if len(aborted) > limitViewRows.max {
			break // refused below
		}
	}
	if err := checkRows("log", to-from+len(aborted), "cells and aborted transactions of "+tp.String(), "log "+pos[0]+" --from OFFSET starts at an offset, --around OFFSET shows a few"); err != nil {
		return nil, err
	}
	text, t, err := s.render("log", to-from, []string{"OFFSET", "VALUE", "PRODUCER", "PID", "EPOCH", "SEQ", "TXN", "READ_COMMITTED"}, func(emit func(...string) error) error {
		for i := from; i < to; i++ {
			c := l.Cells.At(i)
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
			if err := emit(strconv.Itoa(i), val, dash(c.Producer), pid, epoch, seq, state, rc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("%s  HW %d  LSO %d", tp, l.HW(), l.LSO())
	if rec, ok := w.Group.Offsets.Committed(tp); ok {
		head += fmt.Sprintf("  committed %d (%s, generation %d)", rec.Offset, rec.MemberID, rec.Generation)
	}
	if narrowed {
		switch {
		case from == to:
			head += fmt.Sprintf("  (no rows from offset %d)", from)
		default:
			head += fmt.Sprintf("  (offsets %d..%d of 0..%d)", from, to-1, l.HW()-1)
		}
	}
	if len(aborted) > 0 {
		head += "\naborted transaction index: " + strings.Join(aborted, "; ")
	}
	return &Result{Text: head + "\n" + text, Table: t, HTML: tableHTML(t)}, nil
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
	if err := checkRows("txn", len(entries), "transactional ids", "txn ID shows one"); err != nil {
		return nil, err
	}
	t := &Table{Header: []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationTimeMs", "TopicPartitions"}}
	for i, e := range entries {
		if err := s.pollRow("txn", i); err != nil {
			return nil, err
		}
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
	pos, fl, err := flags("consume", args, append([]string{"--isolation"}, listFlags...), []string{"--json"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("consume", pos, 1, 1); err != nil {
		return nil, err
	}
	lw, err := parseWindow("consume", fl, "OFFSET")
	if err != nil {
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
	rd := topicReader{w: w, topic: pos[0], iso: iso}
	// The records the view lists (from --from's offset of each
	// partition), counted before any is made.
	n, err := rd.count(s, lw.from)
	if err != nil {
		return nil, err
	}
	lo, hi := listWindow{last: lw.last}.rows(n, nil)
	if err := checkRows("consume", hi-lo, "records of "+pos[0], "consume "+pos[0]+" --last N shows the last N, --from OFFSET each partition from an offset on"); err != nil {
		return nil, err
	}
	// The listed records with the n-th invoice of their input record, as
	// this reader meets them from offset 0 (as sim.World.Delivery counts
	// duplicates); each call reads them again.
	each := func(f func(r sim.ReadRecord, nth int) error) error {
		seen := map[string]int{}
		k := 0 // the listed records met so far
		var ferr error
		err := rd.each(s, func(r sim.ReadRecord) bool {
			nth := 0
			if r.Source != "" {
				seen[r.Source]++
				nth = seen[r.Source]
			}
			if r.Offset < lw.from {
				return true
			}
			if k >= lo {
				if ferr = f(r, nth); ferr != nil {
					return false
				}
			}
			k++
			return k < hi
		})
		if ferr != nil {
			return ferr
		}
		return err
	}
	if fl["--json"] == "true" {
		// consumeJSON's own encoding, its records written one by one.
		head, _ := json.Marshal(consumeJSON{Topic: pos[0], Isolation: iso, Records: []recordJSON{}})
		var b strings.Builder
		b.WriteString(strings.TrimSuffix(string(head), "[]}"))
		if err := s.jsonList("consume", &b, func(emit func(any) error) error {
			return each(func(r sim.ReadRecord, nth int) error {
				return emit(recordJSON{Partition: r.Partition.String(), Offset: r.Offset, Value: r.Value, Aborted: r.Aborted, Open: r.Open, Invoice: nth})
			})
		}); err != nil {
			return nil, err
		}
		b.WriteByte('}')
		line := b.String()
		return &Result{Text: line, JSON: line}, nil
	}
	text, t, err := s.render("consume", hi-lo, []string{"PARTITION", "OFFSET", "VALUE", "NOTE"}, func(emit func(...string) error) error {
		return each(func(r sim.ReadRecord, nth int) error {
			var notes []string
			switch {
			case r.Aborted:
				notes = append(notes, "aborted ✗")
			case r.Open:
				notes = append(notes, "open transaction")
			}
			if nth > 1 {
				notes = append(notes, fmt.Sprintf("duplicate ×%d (invoice %d of %s)", nth, nth, r.Source))
			}
			return emit(r.Partition.String(), strconv.Itoa(r.Offset), r.Value, strings.Join(notes, " · "))
		})
	})
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("%s at %s: %d record(s)", pos[0], iso, hi-lo)
	if pos[0] == w.Topo.Output.Name {
		c := w.Delivery(iso)
		head += fmt.Sprintf("; duplicates %d%s; lost %d%s", c.Duplicates, nameList(c.DuplicateNames), c.Lost, nameList(c.LostNames))
		if c.HeldBack > 0 {
			head += fmt.Sprintf("; held back by the LSO %d%s", c.HeldBack, nameList(c.HeldBackNames))
		}
	}
	return &Result{Text: head + "\n" + text, Table: t, HTML: tableHTML(t)}, nil
}

// topicReader is the audit reader (sim.World.ReadTopic) record by record:
// the topic's partitions in the world's order, each from offset 0, its
// data records (no markers), at read_committed only those a
// read_committed reader returns. It builds a record only when asked for
// one, so counting costs no allocation and a view of a few records of a
// long topic builds a few. (TestTopicReaderIsReadTopic checks it against
// ReadTopic.)
type topicReader struct {
	w          *sim.World
	topic, iso string
}

func (rd topicReader) partitions() []sim.TopicPartition {
	var out []sim.TopicPartition
	for _, tp := range append(append([]sim.TopicPartition{}, rd.w.Layout().Inputs()...), rd.w.Layout().Outputs()...) {
		if tp.Topic == rd.topic {
			out = append(out, tp)
		}
	}
	return out
}

func (rd topicReader) returns(l *sim.PartitionLog, i int) bool {
	return l.Cells.IsData(i) && (rd.iso != "read_committed" || l.ReadCommitted(i))
}

// count counts the records at offset from or later, looking for Ctrl-C.
func (rd topicReader) count(s *Session, from int) (int, error) {
	n, seen := 0, 0
	for _, tp := range rd.partitions() {
		l := rd.w.Log(tp)
		for i := from; i < l.HW(); i++ {
			if err := s.pollRow("consume", seen); err != nil {
				return 0, err
			}
			seen++
			if rd.returns(l, i) {
				n++
			}
		}
	}
	return n, nil
}

// each gives f the records in order until f returns false, looking for Ctrl-C.
func (rd topicReader) each(s *Session, f func(sim.ReadRecord) bool) error {
	seen := 0
	for _, tp := range rd.partitions() {
		l := rd.w.Log(tp)
		for i := 0; i < l.HW(); i++ {
			if err := s.pollRow("consume", seen); err != nil {
				return err
			}
			seen++
			if !rd.returns(l, i) {
				continue
			}
			c := l.Cells.At(i)
			if !f(sim.ReadRecord{Partition: tp, Offset: i, Value: c.Value, Source: c.Source, Aborted: c.Txn == sim.TxnAborted, Open: c.Txn == sim.TxnOpen}) {
				return nil
			}
		}
	}
	return nil
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
	// In real time (time ms), the ticks as milliseconds from the world's
	// start; absent on the page's scale.
	SentMS      *int64 `json:"sent_ms,omitempty"`
	DeliveredMS *int64 `json:"delivered_ms,omitempty"`
}

func cmdTrace(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("trace", args, []string{"--type", "--member", "--from"}, []string{"--json", "--events"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("trace", pos, 0, 1); err != nil {
		return nil, err
	}
	lw, err := parseWindow("trace", fl, "TICK")
	if err != nil {
		return nil, err
	}
	w := s.World()
	clk := clockOf(w)
	if len(pos) == 1 {
		if lw.last, err = parseCount("trace", "N", pos[0], 1, 100_000_000); err != nil {
			return nil, err
		}
	}
	pkts, err := s.filterPackets(w, fl["--type"], fl["--member"], lw)
	if err != nil {
		return nil, err
	}
	events := fl["--events"] == "true"
	evLo, evHi := 0, w.Events.Len()
	if events {
		if lw.hasFrom {
			evLo = firstAtOrAfter(evHi, lw.from, func(i int) int { return w.Events.At(i).Tick })
		}
		n := evHi - evLo
		if err := limitTraceRows.checkf("trace --events", n, fmt.Sprintf("%d events", n)); err != nil {
			return nil, err
		}
	}
	if fl["--json"] == "true" {
		// {"packets":[...]} and with --events ,"events":[...], written
		// item by item.
		var b strings.Builder
		b.WriteString(`{"packets":`)
		if err := s.jsonList("trace", &b, func(emit func(any) error) error {
			for j := range pkts.len() {
				p := w.Packets.At(pkts.at(j))
				pj := packetJSON{Sent: p.Sent, From: p.From, To: p.To, Type: string(p.Type), Response: p.Response, Summary: p.Summary, Lost: p.Lost}
				if clk.real {
					ms := clk.ms(p.Sent)
					pj.SentMS = &ms
				}
				if p.Delivered >= 0 {
					d := p.Delivered
					pj.Delivered = &d
					if clk.real {
						ms := clk.ms(d)
						pj.DeliveredMS = &ms
					}
				}
				if p.Error != sim.None {
					e := p.Error.String()
					pj.Error = &e
				}
				if err := emit(pj); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if events {
			b.WriteString(`,"events":`)
			if err := s.jsonList("trace", &b, func(emit func(any) error) error {
				for i := evLo; i < evHi; i++ {
					e := w.Events.At(i)
					m := &e.Member
					if e.Member == "" {
						m = nil // the coordinator's
					}
					if err := emit(eventJSON{Tick: e.Tick, Kind: string(e.Kind), Member: m, Text: e.Text, Stop: e.Stop}); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return nil, err
			}
		}
		b.WriteByte('}')
		line := b.String()
		return &Result{Text: line, JSON: line}, nil
	}
	// In real time a tick reads as its time, the tick beside it.
	at := clk.cell
	text, t, err := s.render("trace", pkts.len(), []string{"SENT", "DELIVERED", "FROM", "TO", "TYPE", "ERROR", "DETAIL"}, func(emit func(...string) error) error {
		for j := range pkts.len() {
			p := w.Packets.At(pkts.at(j))
			del := "in flight"
			if p.Lost {
				del = "lost"
			} else if p.Delivered >= 0 {
				del = at(p.Delivered)
			}
			typ := string(p.Type)
			if p.Response && p.Type != sim.RebalanceNotification {
				typ += " response"
			}
			errs := "-"
			if p.Error != sim.None {
				errs = fmt.Sprintf("%s (%d)", p.Error, int(p.Error))
			}
			if err := emit(at(p.Sent), del, p.From, p.To, typ, errs, p.Summary); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if events {
		// A line an event, measured before it is written, as render does.
		line := func(e sim.Event) string { return clk.stamp(e.Tick) + " " + clk.annotate(e.Text) + "\n" }
		size := len(text) + len("\nevents:\n")
		for i := evLo; i < evHi; i++ {
			if err := s.pollRow("trace", i-evLo); err != nil {
				return nil, err
			}
			size += len(line(w.Events.At(i)))
		}
		if err := limitViewBytes.check("trace --events", size); err != nil {
			return nil, fmt.Errorf("%w: its text would be %s bytes (trace N or --from narrow it)", err, group(size))
		}
		var b strings.Builder
		b.Grow(size)
		b.WriteString(text)
		b.WriteString("\nevents:\n")
		for i := evLo; i < evHi; i++ {
			if err := s.pollRow("trace", i-evLo); err != nil {
				return nil, err
			}
			b.WriteString(line(w.Events.At(i)))
		}
		text = b.String()
	}
	return &Result{Text: text, Table: t, HTML: tableHTML(t)}, nil
}

// eventJSON is one event in trace --events --json.
type eventJSON struct {
	Tick   int     `json:"tick"`
	Kind   string  `json:"kind"`
	Member *string `json:"member"` // a client id; null for the coordinator
	Text   string  `json:"text"`
	Stop   bool    `json:"stop"`
}

// packetSet is the packets a trace view lists: a run of the trace
// [lo, hi), or, when a filter picked them, their indexes.
type packetSet struct {
	lo, hi int
	idx    []int
	picked bool
}

func (ps packetSet) len() int {
	if ps.picked {
		return len(ps.idx)
	}
	return ps.hi - ps.lo
}

// at is the trace index of the set's j-th packet.
func (ps packetSet) at(j int) int {
	if ps.picked {
		return ps.idx[j]
	}
	return ps.lo + j
}

// filterPackets keeps the packets of the named types (comma-separated) to
// or from a member, sent at --from's tick or later, the last --last (trace
// N) of them; empty filters keep everything. What it keeps is counted
// against limitTraceRows before any packet is made: a trace is kept as
// compact records, and a view of every packet of a long run would build
// each one. A filter reads the packets' headers only (no texts), looking
// for Ctrl-C as it goes.
func (s *Session) filterPackets(w *sim.World, types, member string, lw listWindow) (packetSet, error) {
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
				return packetSet{}, fmt.Errorf("trace --type: no message type %q (types: %s)", t, strings.Join(names, " "))
			}
		}
	}
	if member != "" && w.Member(member) == nil {
		return packetSet{}, fmt.Errorf("trace --member: no member %s (members: %s)", member, strings.Join(natural.Sorted(w.Clients()), " "))
	}
	keep := func(n int) error {
		return limitTraceRows.checkf("trace", n, fmt.Sprintf("%d messages (trace N shows the last N, --from TICK those sent from a tick on; --type and --member narrow it)", n))
	}
	n := w.Packets.Len()
	from := 0
	if lw.hasFrom {
		from = firstAtOrAfter(n, lw.from, func(i int) int { return w.Packets.At(i).Sent })
	}
	if len(want) == 0 && member == "" {
		lo, hi := listWindow{last: lw.last}.rows(n, nil)
		lo = max(lo, from)
		if err := keep(hi - lo); err != nil {
			return packetSet{}, err
		}
		return packetSet{lo: lo, hi: hi}, nil
	}
	// Only the indexes that can be shown are kept (the last --last, and no
	// more than the bound allows): the others are counted.
	most := limitTraceRows.max + 1
	if lw.last > 0 {
		most = min(lw.last, most)
	}
	var idx []int
	matched := 0
	for i, p := range w.Packets.Headers(from) {
		if err := s.pollRow("trace", i-from); err != nil {
			return packetSet{}, err
		}
		if len(want) > 0 && !want[p.Type] {
			continue
		}
		if member != "" && p.From != member && p.To != member {
			continue
		}
		matched++
		if idx = append(idx, i); len(idx) >= 2*most {
			idx = append(idx[:0], idx[len(idx)-most:]...)
		}
	}
	if len(idx) > most {
		idx = idx[len(idx)-most:]
	}
	if lw.last > 0 {
		matched = min(matched, lw.last)
	}
	if err := keep(matched); err != nil {
		return packetSet{}, err
	}
	return packetSet{idx: idx, picked: true}, nil
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
	// In real time (time ms): the clock's tick, the time now, and the
	// pause meter and the LSO's hold in partition x seconds (SPEC §12).
	// Absent on the page's scale.
	TickMS                *int     `json:"tick_ms,omitempty"`
	TimeMS                *int64   `json:"time_ms,omitempty"`
	PausePartitionSeconds *float64 `json:"pause_partition_seconds,omitempty"`
	LSOHeldSeconds        *float64 `json:"lso_held_partition_seconds,omitempty"`
	// Rolls are the rolling deploys (roll), with what each cost; only
	// when there was one.
	Rolls []rollJSON `json:"rolls,omitempty"`
	// In real time: the unavailability in partition x seconds (its
	// partition x ticks stay in unavailable_partition_ticks).
	UnavailableSeconds *float64 `json:"unavailable_partition_seconds,omitempty"`
}

type pauseJSON struct {
	Generation     int      `json:"generation"`
	Partitions     []string `json:"partitions"`
	PartitionTicks int      `json:"partition_ticks"`
	// In real time: partition x seconds.
	PartitionSeconds *float64 `json:"partition_seconds,omitempty"`
}

// seconds is a number of ticks as seconds (exact to the millisecond).
func (c clock) seconds(ticks int) *float64 {
	v := float64(c.ms(ticks)) / 1000
	return &v
}

// buildMetrics reads the metrics off the world, looking for Ctrl-C; the
// rows per rebalance (Pauses) are left empty for the view to write.
func buildMetrics(s *Session, w *sim.World) (metricsJSON, error) {
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
	// The errors of the whole trace, read from its compact records.
	w.Packets.ErrorsFrom(0, func(_ sim.API, _ bool, e sim.ErrorCode) {
		if e == sim.ProducerFenced || e == sim.InvalidProducerEpoch || e == sim.FencedInstanceID {
			m.Fenced++
		}
	})
	k := 0
	for r := range w.Sink.Runs() {
		if err := s.pollRow("metrics", k); err != nil {
			return m, err
		}
		k++
		if r.Times > 1 {
			m.SinkDuplicates += (r.Times - 1) * (r.To - r.From)
		}
	}
	for _, tp := range w.Layout().Inputs() {
		m.Lag += w.Lag(tp)
	}
	if clk := clockOf(w); clk.real {
		tickMS, now := clk.tickMS, clk.ms(w.Tick)
		m.TickMS, m.TimeMS = &tickMS, &now
		m.PausePartitionSeconds, m.LSOHeldSeconds = clk.seconds(m.PausePartitionTicks), clk.seconds(m.LSOHeldTicks)
		m.UnavailableSeconds = clk.seconds(m.Unavailable)
	}
	m.Rolls = rollsJSON(w, clockOf(w))
	return m, nil
}

// unavailableSum is the unavailability as the sum of its causes, each
// count of partition x ticks written by num: "196 = rebalance 168 + owner
// down 28 + unassigned 0 + stopped 0" (in real time, each in partition x
// seconds).
func unavailableSum(s health.Summary, num func(int) string) string {
	parts := []string{num(s.Unavailable)}
	for i, c := range sim.Causes {
		sep := " = "
		if i > 0 {
			sep = " + "
		}
		parts = append(parts, sep+health.CauseName(c)+" "+num(s.ByCause[c.String()]))
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
	pos, fl, err := flags("metrics", args, listFlags, []string{"--json"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("metrics", pos, 0, 0); err != nil {
		return nil, err
	}
	lw, err := parseWindow("metrics", fl, "TICK")
	if err != nil {
		return nil, err
	}
	w := s.World()
	// The rows per rebalance, in the order they began (the meter keeps
	// them by incarnation and generation, which is that order).
	ents := w.Meter.Entries
	lo, hi := lw.rows(len(ents), func(t int) int {
		return firstAtOrAfter(len(ents), t, func(i int) int { return ents[i].FirstTick })
	})
	if err := checkRows("metrics", hi-lo, "rebalances with pauses", "metrics --last N shows the last N, --from TICK those begun from a tick on"); err != nil {
		return nil, err
	}
	// The rows per rebalance are written one by one, in the text and in
	// the JSON (where metricsJSON's own encoding has them in place of an
	// empty "pauses" list).
	m, err := buildMetrics(s, w)
	if err != nil {
		return nil, err
	}
	if fl["--json"] == "true" {
		whole := jsonLine(m)
		at := strings.Index(whole, `"pauses":[]`) + len(`"pauses":`)
		var b strings.Builder
		b.WriteString(whole[:at])
		if err := s.jsonList("metrics", &b, func(emit func(any) error) error {
			for i := lo; i < hi; i++ {
				e := ents[i]
				p := pauseJSON{Generation: e.Generation, Partitions: tpNames(e.Partitions), PartitionTicks: e.PartitionTicks}
				if clk := clockOf(w); clk.real {
					p.PartitionSeconds = clk.seconds(e.PartitionTicks)
				}
				if err := emit(p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		b.WriteString(whole[at+len("[]"):])
		line := b.String()
		return &Result{Text: line, JSON: line}, nil
	}
	t := &Table{Header: []string{"METRIC", "VALUE"}}
	clk := clockOf(w)
	// In real time, a count of partition x ticks reads as partition x
	// seconds, the ticks beside it.
	partTicks := func(n int) string { return strconv.Itoa(n) }
	if clk.real {
		t.Add("time", fmt.Sprintf("%s (tick %d, tick.ms %d)", clk.at(m.Tick), m.Tick, clk.tickMS))
		partTicks = func(n int) string { return fmt.Sprintf("%s (%d partition x ticks)", partSeconds(clk, n), n) }
	} else {
		t.Add("tick", strconv.Itoa(m.Tick))
	}
	consumer := w.Group.Type() == sim.ConsumerGroup
	if consumer {
		t.Add("group epoch (group.protocol=consumer)", strconv.Itoa(m.Generation))
	} else {
		t.Add("generation", strconv.Itoa(m.Generation))
	}
	t.Add("rebalances", strconv.Itoa(m.Rebalances))
	if clk.real {
		t.Add("pause meter (partition x seconds)", partTicks(m.PausePartitionTicks))
		t.Add("unavailable (partition x seconds)", unavailableSum(m.Summary, func(n int) string { return partSeconds(clk, n) })+
			fmt.Sprintf(" (%d partition x ticks)", m.Unavailable))
	} else {
		t.Add("pause meter ("+health.Unit+")", partTicks(m.PausePartitionTicks))
		t.Add("unavailable ("+health.Unit+")", unavailableSum(m.Summary, strconv.Itoa))
	}
	t.Add("records processed", strconv.Itoa(m.Processed))
	t.Add("duplicates ("+m.Isolation+")", strconv.Itoa(m.Duplicates)+nameList(m.DuplicateRecords))
	t.Add("lost ("+m.Isolation+")", strconv.Itoa(m.Lost)+nameList(m.LostRecords))
	t.Add("duplicates read_committed / read_uncommitted", fmt.Sprintf("%d / %d", m.DuplicatesRC, m.DuplicatesRU))
	t.Add("held back by the LSO (read_committed)", strconv.Itoa(m.HeldBack))
	if clk.real {
		t.Add("time the LSO held readers back (partition x seconds)", partTicks(m.LSOHeldTicks))
	} else {
		t.Add("ticks the LSO held readers back (partition x ticks)", partTicks(m.LSOHeldTicks))
	}
	t.Add("zombie writes", strconv.Itoa(m.ZombieWrites))
	t.Add("transactions aborted (timed out)", fmt.Sprintf("%d (%d)", m.TxnAborted, m.TxnTimedOut))
	t.Add("fenced requests", strconv.Itoa(m.Fenced))
	t.Add("external sink duplicates", strconv.Itoa(m.SinkDuplicates))
	t.Add("total lag", strconv.Itoa(m.Lag))
	t.Add("most lag (records)", m.LagLine(clk.tickAt))
	if line, ok := m.TimeLagLine(clk.dur, clk.tickAt); ok {
		t.Add("most lag (time)", line)
	}
	t.Add("members running", fmt.Sprintf("%d of %d", len(m.Health.Running), m.Health.Members))
	t.Add("health", m.Health.Words)
	text := t.Text()
	if hi > lo {
		header := []string{"GENERATION", "PAUSED", "PARTITION-TICKS"}
		if clk.real {
			header[2] = "PARTITION-SECONDS"
		}
		title := "pauses per rebalance"
		if consumer {
			header[0] = "GROUP-EPOCH"
			title = "pauses per rebalance (group epoch)"
		}
		pauses, _, err := s.render("metrics", hi-lo, header, func(emit func(...string) error) error {
			for i := lo; i < hi; i++ {
				p := ents[i]
				if err := emit(strconv.Itoa(p.Generation), strconv.Itoa(len(p.Partitions))+" "+w.Layout().PartList(p.Partitions), partTicks(p.PartitionTicks)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		text += "\n" + title + ":\n" + pauses
	}
	text += rollsText(m.Rolls, clk)
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
		if !m.Alive && m.StoppedBy != "" {
			notes = append(notes, "stopped: "+m.StoppedBy)
		} else if !m.Alive {
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
