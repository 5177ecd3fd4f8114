package kernel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

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
	return &Result{Text: header + t.Text(), Table: t, HTML: s.htmlOf(t)}, nil
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
	_, _, lw, err := listArgs("offsets", args, listFlags, nil, 0, 0, "TICK")
	if err != nil {
		return nil, err
	}
	w, note := s.World(), ""
	if lw.hasFrom {
		// Records the world let go (history.ms) are made again by
		// replaying, as trace --from makes its ticks.
		if w, note, err = s.detailWorld("offsets --from", lw.from); err != nil {
			return nil, err
		}
	}
	log := &w.Group.Offsets.Log
	// The records shown are those of the ticks the window keeps
	// (DetailFrom), not those of the chunks the log happens to keep.
	kept := log.First()
	kept += firstAtOrAfter(log.Len()-kept, w.DetailFrom(), func(i int) int { return log.TickAt(kept + i) })
	lo, hi := lw.rows(log.Len()-kept, func(t int) int {
		return firstAtOrAfter(log.Len()-kept, t, func(i int) int { return log.TickAt(kept + i) })
	})
	lo, hi = lo+kept, hi+kept
	if err := checkRows("offsets", hi-lo, "records of __consumer_offsets", "offsets --last N shows the last N, --from TICK those from a tick on"); err != nil {
		return nil, err
	}
	// In real time a record's tick reads as its time, the tick beside it.
	clk := clockOf(w)
	col := "TICK"
	if clk.real {
		col = "TIME (TICK)"
	}
	// A row's cells are spelled into one buffer, not by fmt: a long
	// session's log holds thousands of records, and the view spelled
	// each with three Sprintf calls (most of what printing it cost).
	var b []byte
	text, t, err := s.render("offsets", hi-lo, []string{col, "KEY", "VALUE", "STATE"}, func(emit func(...string) error) error {
		for i := lo; i < hi; i++ {
			r := log.At(i)
			if r.Marker {
				// STATE marker, producerId=PID
				b = append(append(b[:0], r.State...), " marker, producerId="...)
				if err := emit(clk.cell(r.Tick), "control", string(strconv.AppendInt(b, r.PID, 10)), r.State); err != nil {
					return err
				}
				continue
			}
			// offset=O generation=G member=M, and producerId=PID
			b = strconv.AppendInt(append(b[:0], "offset="...), int64(r.Offset), 10)
			b = strconv.AppendInt(append(b, " generation="...), int64(r.Generation), 10)
			b = append(append(b, " member="...), r.MemberID...)
			if r.PID >= 0 {
				b = strconv.AppendInt(append(b, " producerId="...), r.PID, 10)
			}
			val := string(b)
			// [GROUP,TOPIC,PARTITION]
			b = append(append(append(append(b[:0], '['), r.Group...), ','), r.TP.Topic...)
			b = append(strconv.AppendInt(append(b, ','), int64(r.TP.Partition), 10), ']')
			if err := emit(clk.cell(r.Tick), string(b), val, r.State); err != nil {
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
		text = head + fmt.Sprintf("no records from %s on\n", clk.tickAt(max(lw.from, w.DetailFrom())))
	default:
		text = head + text
	}
	if note == "" && !lw.hasFrom && (lw.last == 0 || hi-lo < lw.last) {
		// The listing reaches back to the window's start: say so.
		note = windowNote(w)
	}
	if note != "" {
		text += "\n" + note
	}
	return &Result{Text: text, Table: t, HTML: s.htmlOf(t)}, nil
}
