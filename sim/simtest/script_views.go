package simtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kgrepl/kgrepl/sim"
)

// trace [all] [type=(API, ...)] [member=Cn]: the packets sent since the
// last trace (all: since tick 0), one a line, optionally only of some
// types or to or from one member: the tick it was sent, sender, receiver,
// type, error, and the trace's own summary. A packet delivered the next
// tick, as every packet is unless lost, says nothing more; a lost one says
// (lost), one still on the wire (in flight).
func (s *Script) handleTrace(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 0, 1, "trace [all] [type=(API, ...)] [member=Cn]")
	if len(ws) == 1 && ws[0] != "all" {
		d.Fatalf(t, "trace: %q: want all or nothing", ws[0])
	}
	opts := options(t, d, "type", "member")
	types := map[sim.API]bool{}
	for _, v := range opts["type"] {
		known := false
		for _, a := range sim.APIs {
			if string(a) == v {
				types[a], known = true, true
			}
		}
		if !known {
			d.Fatalf(t, "trace: no message type %q (types: %v)", v, sim.APIs)
		}
	}
	member := ""
	if v, ok := opts["member"]; ok {
		member = v[0]
	}
	from := s.traced
	if len(ws) == 1 {
		from = 0
	}
	s.traced = s.w.Packets.Len()
	var b strings.Builder
	for _, p := range s.w.Packets.From(from) {
		if len(types) > 0 && !types[p.Type] || member != "" && p.From != member && p.To != member {
			continue
		}
		fmt.Fprintf(&b, "t=%-4d %s -> %s %s", p.Sent, p.From, p.To, p.Type)
		if p.Response && p.Type != sim.RebalanceNotification {
			b.WriteString(" response")
		}
		if p.Error != sim.None {
			fmt.Fprintf(&b, " %s (%d)", p.Error, int(p.Error))
		}
		switch {
		case p.Lost:
			b.WriteString(" (lost)")
		case p.Delivered < 0:
			b.WriteString(" (in flight)")
		case p.Delivered != p.Sent+1:
			fmt.Fprintf(&b, " (delivered t=%d)", p.Delivered)
		}
		if p.Summary != "" {
			b.WriteString(": " + p.Summary)
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "no packets", nil
	}
	return b.String(), nil
}

// group: the coordinator's view of the group and of each member, in
// member-id order: a classic group's generation, leader and assignor and
// each member's assignment (and the assignors it lists, when more than
// the group's); a consumer group's epochs and each member's
// epoch, reconciliation state, current and target assignment.
func (s *Script) handleGroup(t testing.TB, d *datadriven.TestData) (string, error) {
	wantWords(t, d, 0, 0, "group")
	g := s.w.Group.Describe()
	var b strings.Builder
	if g.Type == sim.ConsumerGroup {
		fmt.Fprintf(&b, "group %s: consumer, %s, group epoch %d, assignment epoch %d, assignor %s\n", g.ID, g.State, g.GroupEpoch, g.AssignmentEpoch, orDash(g.Assignor))
	} else {
		fmt.Fprintf(&b, "group %s: classic, %s, generation %d, leader %s, assignor %s\n", g.ID, g.State, g.Generation, orDash(g.Leader), orDash(g.Assignor))
	}
	for _, gm := range g.Members {
		fmt.Fprintf(&b, "  %s", gm.MemberID)
		if gm.InstanceID != "" {
			fmt.Fprintf(&b, " instance %s", gm.InstanceID)
		}
		if g.Type == sim.ConsumerGroup {
			if gm.ClassicMember {
				b.WriteString(" classic")
			}
			fmt.Fprintf(&b, " epoch %d %s %s target %s", gm.MemberEpoch, orDash(gm.MemberState), s.w.Layout().PartList(gm.Assignment), s.w.Layout().PartList(gm.Target))
			if len(gm.Revoking) > 0 {
				fmt.Fprintf(&b, " revoking %s", s.w.Layout().PartList(gm.Revoking))
			}
		} else {
			fmt.Fprintf(&b, " %s", s.w.Layout().PartList(gm.Assignment))
		}
		if g.Type == sim.ClassicGroup && !(len(gm.Protocols) == 1 && gm.Protocols[0] == g.Assignor) {
			// what the member listed in its JoinGroup, when it is more
			// than the group's assignor (ClassicGroup.supportedProtocols)
			fmt.Fprintf(&b, " lists %s", strings.Join(gm.Protocols, ","))
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// members: each client's newest process, and every older one still
// running (a zombie), as the client sees itself: member id, generation or
// member epoch, phase, poll loop, what it owns (and a classic process's
// assignor list, when it names more than one, with the rebalance protocol
// it makes the process run).
func (s *Script) handleMembers(t testing.TB, d *datadriven.TestData) (string, error) {
	wantWords(t, d, 0, 0, "members")
	var b strings.Builder
	for _, m := range s.w.Processes() {
		if !m.Alive && m != s.w.Member(m.Client) {
			continue
		}
		fmt.Fprintf(&b, "%s process %d: %s gen %d %s %s owns %s", m.Client, m.Inc, orDash(m.MemberID), m.Generation, m.Phase, m.LoopState(), s.w.Layout().PartList(m.Owned))
		if as := m.Cfg.Assignors(); len(as) > 1 && m.GroupProtocol() == sim.ClassicGroup {
			// a list: which rebalance protocol it makes the process run
			// (ConsumerCoordinator's constructor)
			fmt.Fprintf(&b, ", assignors %s (%s)", m.Cfg.Assignor, m.Cfg.RebalanceProtocol())
		}
		if !m.Alive && m.StoppedBy != "" {
			b.WriteString(", stopped: " + m.StoppedBy)
		} else if !m.Alive {
			b.WriteString(", not running")
		}
		if m.Zombie {
			b.WriteString(", zombie")
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// offsets: the records of __consumer_offsets, oldest first, as the
// kernel's offsets view lists them.
func (s *Script) handleOffsets(t testing.TB, d *datadriven.TestData) (string, error) {
	wantWords(t, d, 0, 0, "offsets")
	var b strings.Builder
	for _, r := range s.w.Group.Offsets.Log.All() {
		if r.Marker {
			fmt.Fprintf(&b, "t=%-4d %s marker, producerId=%d\n", r.Tick, r.State, r.PID)
			continue
		}
		fmt.Fprintf(&b, "t=%-4d %s@%d generation=%d member=%s", r.Tick, s.w.Layout().ShortName(r.TP), r.Offset, r.Generation, r.MemberID)
		if r.PID >= 0 {
			fmt.Fprintf(&b, " producerId=%d", r.PID)
		}
		fmt.Fprintf(&b, " %s\n", r.State)
	}
	if b.Len() == 0 {
		return "no records yet", nil
	}
	return b.String(), nil
}

// log PARTITION: a partition's HW and LSO, its aborted transaction index,
// and each cell: offset, value, producer, pid/epoch/seq, transactional
// state, and whether read_committed returns it.
func (s *Script) handleLog(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 1, 1, "log PARTITION")
	tp, err := s.w.Layout().ParsePartition(ws[0])
	if err != nil {
		d.Fatalf(t, "log: %v", err)
	}
	l := s.w.Log(tp)
	if l == nil {
		d.Fatalf(t, "log: no partition %s", ws[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s HW %d LSO %d\n", tp, l.HW(), l.LSO())
	for _, a := range l.Aborted {
		fmt.Fprintf(&b, "aborted: pid %d offsets %d..%d\n", a.PID, a.First, a.Last)
	}
	for i, c := range l.Cells.All() {
		fmt.Fprintf(&b, "%d %s %s", i, c.Value, orDash(c.Producer))
		if c.PID >= 0 {
			fmt.Fprintf(&b, " pid %d epoch %d", c.PID, c.Epoch)
		}
		if c.Seq >= 0 {
			fmt.Fprintf(&b, " seq %d", c.Seq)
		}
		if !c.IsData() {
			b.WriteString(" marker")
		} else if c.Txn != sim.NotTransactional {
			fmt.Fprintf(&b, " %s", c.Txn)
		}
		if !l.ReadCommitted(i) {
			b.WriteString(" (not read_committed)")
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// txn: the transaction coordinator's entries (kafka-transactions.sh
// describe's fields): transactional.id, producer id and epoch, state, the
// partitions in the transaction.
func (s *Script) handleTxn(t testing.TB, d *datadriven.TestData) (string, error) {
	wantWords(t, d, 0, 0, "txn")
	var b strings.Builder
	for _, e := range s.w.Txn.Entries() {
		var parts []string
		for _, tp := range e.Partitions {
			parts = append(parts, tp.String())
		}
		if e.Group != "" {
			parts = append(parts, "__consumer_offsets("+e.Group+")")
		}
		fmt.Fprintf(&b, "%s pid %d epoch %d %s %s\n", e.TransactionalID, e.PID, e.Epoch, e.State, orDash(strings.Join(parts, ",")))
	}
	if b.Len() == 0 {
		return "no transactional producers", nil
	}
	return b.String(), nil
}

// delivery [isolation=read_committed|read_uncommitted]: the output as the
// audit reader sees it (World.Delivery): duplicates, records lost, and
// what the LSO holds back.
func (s *Script) handleDelivery(t testing.TB, d *datadriven.TestData) (string, error) {
	wantWords(t, d, 0, 0, "delivery [isolation=LEVEL]")
	iso := "read_uncommitted"
	if v, ok := options(t, d, "isolation")["isolation"]; ok {
		iso = v[0]
	}
	c := s.w.Delivery(iso)
	return fmt.Sprintf("%s: processed %d, duplicates %d %v, lost %d %v, held back %d %v", iso, s.w.Processed(),
		c.Duplicates, c.DuplicateNames, c.Lost, c.LostNames, c.HeldBack, c.HeldBackNames), nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
