package sim

import (
	"fmt"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// Checker verifies the world's invariants after every tick. It remembers
// what it saw before (generations, epochs, transitions already checked), so
// one Checker follows one world.
type Checker struct {
	lastEpoch   int
	memberEpoch map[string]int
	groupSeen   int
	txnSeen     int
	epochs      map[string]int
	offsetsSeen int
	incarnation int // the group's Incarnation the numbers above belong to
}

// NewChecker starts checking a world from its current state.
func NewChecker() *Checker {
	return &Checker{lastEpoch: -1, epochs: map[string]int{}, memberEpoch: map[string]int{}}
}

// Check returns the first invariant the world breaks, or nil. Under the
// sim package's tests (checkConsumed) it also brings the world's consumed
// set up to date, which recounts it from scratch (consumed.go): every
// tick a test checks proves the set, not only the ticks of a rebalance.
func (c *Checker) Check(w *World) error {
	if checkConsumed {
		w.scratch.consumed.update(&w.processTable, w.layout)
	}
	for _, check := range []func(*World) error{c.checkGroup, c.checkOffsets, c.checkLogs, c.checkTxns} {
		if err := check(w); err != nil {
			return err
		}
	}
	return nil
}

// checkGroup: the group's numbers only grow, its transitions are Kafka's,
// its counts are right, no partition has two owners or two consumers in
// the current generation or epoch.
func (c *Checker) checkGroup(w *World) error {
	g := w.Group
	d := g.Describe()
	if g.Incarnation != c.incarnation {
		// The empty group was deleted and made anew (Coordinator.recreate):
		// its numbers start again at 0 and only grow from there.
		c.incarnation, c.lastEpoch = g.Incarnation, -1
		clear(c.memberEpoch)
	}
	// Generations and group epochs only grow (within one incarnation of
	// the group: a conversion carries the number over, a classic group's
	// generation becoming the consumer group's epoch and back).
	if d.Epoch < c.lastEpoch {
		return fmt.Errorf("tick %d: %s went from %d back to %d", w.Tick, epochName(d.Type), c.lastEpoch, d.Epoch)
	}
	c.lastEpoch = d.Epoch
	// Every coordinator transition is one Kafka allows.
	for _, t := range g.Transitions.Slice(c.groupSeen, g.Transitions.Len()) {
		if !LegalTransition(t.Type, t.From, t.To) {
			return fmt.Errorf("tick %d: illegal group transition %s -> %s", t.Tick, t.From, t.To)
		}
	}
	c.groupSeen = g.Transitions.Len()
	// The counts the group keeps are what a walk over the members finds.
	if err := g.CheckCounts(); err != nil {
		return fmt.Errorf("tick %d: %v", w.Tick, err)
	}
	// Within one generation no partition is assigned to two members.
	owner := map[TopicPartition]string{}
	for _, gm := range d.Members {
		for _, tp := range gm.Assignment {
			if o, ok := owner[tp]; ok {
				return fmt.Errorf("tick %d: %s %d assigns %s to both %s and %s", w.Tick, epochName(d.Type), d.Epoch, tp, o, gm.MemberID)
			}
			owner[tp] = gm.MemberID
		}
	}
	if err := c.checkConsumerGroup(w, d); err != nil {
		return err
	}
	// No partition is consumed by two members of the current generation.
	// Members of an older one are zombies: fencing is what stops them.
	fetching := map[TopicPartition]string{}
	for _, m := range w.current {
		if !m.Alive || !m.InGroup() || m.Zombie || !current(d, m) {
			continue
		}
		for _, tp := range m.Fetchable() {
			if o, ok := fetching[tp]; ok {
				return fmt.Errorf("tick %d: %s is consumed by both %s and %s", w.Tick, tp, o, m.MemberID)
			}
			fetching[tp] = m.MemberID
		}
	}
	return nil
}

// checkOffsets: a committed offset never passes the log end; no pending
// offset becomes committed without its COMMIT marker.
func (c *Checker) checkOffsets(w *World) error {
	g := w.Group
	// A committed offset never passes the log end.
	var past error
	g.Offsets.EachCommitted(func(tp TopicPartition, offset int) bool {
		if offset > w.broker.Log(tp).HW() {
			past = fmt.Errorf("tick %d: committed offset %d of %s passes the log end %d", w.Tick, offset, tp, w.broker.Log(tp).HW())
		}
		return past == nil
	})
	if past != nil {
		return past
	}
	// The lags read by number (the charts' and metrics' InputLags and
	// TotalLag) are Lag's, read by name.
	lags, total := w.InputLags(nil, nil), 0
	for i, tp := range w.layout.Inputs() {
		if lag := w.Lag(tp); lags[i] != lag {
			return fmt.Errorf("tick %d: lag of %s read by number is %d, by name %d", w.Tick, tp, lags[i], lag)
		}
		total += lags[i]
	}
	if t := w.TotalLag(nil); t != total {
		return fmt.Errorf("tick %d: total lag read by number is %d, the partitions' sum %d", w.Tick, t, total)
	}
	// No pending offset becomes committed without its COMMIT marker
	// (from the first record kept: a world keeping a window of its past
	// lets go of the older ones, coord.OffsetsLog.ForgetBefore). One pass
	// from the end knows, at each record, the producers with a COMMIT
	// marker after it. A pending record turns committed or aborted when
	// its marker is written and no other record changes, so the records
	// before the first one still pending are done with: the next check
	// starts there (offsetsSeen). Each tick re-read the whole log, and
	// each committed record the rest of it, before: 75% of a long
	// property run's CPU (FuzzSchedules seed 164 took 40 s).
	log := &g.Offsets.Log
	if log.Len() < c.offsetsSeen {
		c.offsetsSeen = 0 // not the world it followed: check it all
	}
	from := max(c.offsetsSeen, log.First())
	committedBy := map[int64]bool{}
	done := log.Len()
	for i := log.Len() - 1; i >= from; i-- {
		r := log.At(i)
		switch {
		case r.Marker:
			if r.State == "COMMIT" {
				committedBy[r.PID] = true
			}
		case r.PID < 0:
		case r.State == "pending":
			done = i
		case r.State == "committed" && !committedBy[r.PID]:
			return fmt.Errorf("tick %d: transactional offset %s@%d of pid %d is committed without a COMMIT marker", w.Tick, r.TP, r.Offset, r.PID)
		}
	}
	c.offsetsSeen = done
	return nil
}

// checkLogs: LSO <= HW; the LSO is the first offset of the oldest open
// transaction (or the HW); read_committed never returns an open or
// aborted record.
func (c *Checker) checkLogs(w *World) error {
	// Logs: LSO <= HW; the LSO is the first offset of the oldest open
	// transaction (or the HW); read_committed never returns an open or
	// aborted record.
	for _, tp := range w.layout.Outputs() {
		l := w.broker.Log(tp)
		lso, hw := l.LSO(), l.HW()
		if lso > hw {
			return fmt.Errorf("tick %d: %s has LSO %d past its high watermark %d", w.Tick, tp, lso, hw)
		}
		// IsData and Txn, not At: the checker runs every tick over whole
		// logs, and At spells each cell's value.
		// From the log's start: the cells below it were let go of, all
		// below the LSO (ForgetOutputBefore).
		first, start := hw, l.Start()
		if start > lso {
			return fmt.Errorf("tick %d: %s starts at offset %d, past its LSO %d: a cell of an open transaction was let go of", w.Tick, tp, start, lso)
		}
		for i := start; i < hw; i++ {
			if l.Cells.IsData(i) && l.Cells.Txn(i) == TxnOpen {
				first = i
				break
			}
		}
		if first != lso {
			return fmt.Errorf("tick %d: %s has LSO %d, but its oldest open transaction starts at %d", w.Tick, tp, lso, first)
		}
		for i := start; i < hw; i++ {
			if txn := l.Cells.Txn(i); l.ReadCommitted(i) && (txn == TxnAborted || txn == TxnOpen) {
				return fmt.Errorf("tick %d: read_committed would return %s at %s offset %d (%s)", w.Tick, l.Cells.At(i).Value, tp, i, txn)
			}
		}
	}
	return nil
}

// checkTxns: producer epochs only grow per transactional.id; every
// transaction transition is one Kafka allows.
func (c *Checker) checkTxns(w *World) error {
	// Producer epochs only grow per transactional.id; every transaction
	// transition is one Kafka allows.
	for _, e := range w.Txn.Entries() {
		if prev, ok := c.epochs[e.TransactionalID]; ok && e.Epoch < prev {
			return fmt.Errorf("tick %d: %s epoch went from %d back to %d", w.Tick, e.TransactionalID, prev, e.Epoch)
		}
		c.epochs[e.TransactionalID] = e.Epoch
	}
	for _, t := range w.Txn.Transitions.Slice(c.txnSeen, w.Txn.Transitions.Len()) {
		if t.From != t.To && !LegalTxnTransition(t.From, t.To) {
			return fmt.Errorf("tick %d: illegal transaction transition of %s: %s -> %s", t.Tick, t.TransactionalID, t.From, t.To)
		}
	}
	c.txnSeen = w.Txn.Transitions.Len()
	return nil
}

// current reports whether a process belongs to the group as the
// coordinator sees it now: classic, a member of the current generation;
// consumer, a member the coordinator has under that id at the epoch the
// process holds (or the previous one, whose answer may be on the way).
func current(d GroupDescription, m *Member) bool {
	gm := d.Member(m.MemberID)
	if !m.Consumer() {
		// A process of an earlier incarnation may hold the same number: the
		// coordinator must also have its member id (Coordinator.recreate).
		return d.Type == ClassicGroup && m.Generation == d.Generation && gm != nil
	}
	return d.Type == ConsumerGroup && gm != nil && gm.ClientID == m.Client && gm.Inc == m.Inc &&
		(m.Generation == gm.MemberEpoch || m.Generation == gm.PreviousMemberEpoch)
}

// checkConsumerGroup: within one assignment epoch no partition is owned
// (assigned or pending revocation) by two members; within one incarnation
// of the group (Group.recreate starts it again at 0) the group epoch and
// every member's epoch only grow (a member's epoch starts again only when
// it joins anew after leaving or being fenced, or leaves for now with -2);
// the assignment epoch never passes the group epoch; a live process that
// has caught up with the coordinator (stable at the coordinator's epoch for
// it) owns only what the coordinator has it own.
func (c *Checker) checkConsumerGroup(w *World, d GroupDescription) error {
	if d.AssignmentEpoch > d.GroupEpoch {
		return fmt.Errorf("tick %d: assignment epoch %d passes group epoch %d", w.Tick, d.AssignmentEpoch, d.GroupEpoch)
	}
	if d.Type != ConsumerGroup {
		clear(c.memberEpoch)
		return nil
	}
	owner := map[TopicPartition]string{}
	seen := map[string]bool{}
	for _, gm := range d.Members {
		seen[gm.MemberID] = true
		for _, tp := range append(store.Copy(gm.Assignment), gm.Revoking...) {
			if o, ok := owner[tp]; ok && o != gm.MemberID {
				return fmt.Errorf("tick %d: assignment epoch %d: %s is owned by both %s and %s", w.Tick, d.AssignmentEpoch, tp, o, gm.MemberID)
			}
			owner[tp] = gm.MemberID
		}
		if prev, ok := c.memberEpoch[gm.MemberID]; ok && gm.MemberEpoch < prev && gm.MemberEpoch != 0 && gm.MemberEpoch != LeaveGroupStaticMemberEpoch {
			return fmt.Errorf("tick %d: member %s epoch went from %d back to %d", w.Tick, gm.MemberID, prev, gm.MemberEpoch)
		}
		if gm.MemberEpoch > d.AssignmentEpoch {
			return fmt.Errorf("tick %d: member %s epoch %d passes the assignment epoch %d", w.Tick, gm.MemberID, gm.MemberEpoch, d.AssignmentEpoch)
		}
		c.memberEpoch[gm.MemberID] = gm.MemberEpoch
	}
	for id := range c.memberEpoch {
		if !seen[id] {
			delete(c.memberEpoch, id) // left or fenced: it joins anew at epoch 0
		}
	}
	for _, m := range w.current {
		if !m.Alive || m.Zombie || !m.Consumer() || !m.InGroup() || !current(d, m) {
			continue
		}
		gm := d.Member(m.MemberID)
		if m.Generation != gm.MemberEpoch || m.ConsumerState() != "STABLE" {
			// The client has not caught up with the coordinator: Kafka's
			// client may own what the coordinator already gave away. A
			// heartbeat sent while the client reconciles carries the new
			// member epoch (AbstractMembershipManager.onHeartbeatSuccess
			// updates it at once) and the partitions reconciled so far
			// (ConsumerHeartbeatRequestManager.HeartbeatState's
			// localAssignment), so when the target moves on meanwhile,
			// CurrentAssignmentBuilder.ownsRevokedPartitions finds none of
			// the partitions to revoke in the owned list and releases them
			// to another member, while the client goes on to own them until
			// it reconciles the next answer. That holds after its epoch has
			// caught up too: an answer carrying the next epoch while the
			// client still reconciles the previous assignment sets the
			// epoch at once, and the partitions the previous assignment
			// added are owned until the next reconciliation revokes them
			// (FuzzWideSchedules seed 485). The coordinator's own
			// bookkeeping stays exclusive (checked above).
			continue
		}
		mine := map[TopicPartition]bool{}
		for _, tp := range append(store.Copy(gm.Assignment), gm.Revoking...) {
			mine[tp] = true
		}
		for _, tp := range m.Owned {
			if !mine[tp] {
				return fmt.Errorf("tick %d: %s owns %s, which the coordinator gives it neither as assigned nor as pending revocation", w.Tick, m.MemberID, tp)
			}
		}
	}
	return nil
}

// epochName is what a group of type t counts its rebalances in.
func epochName(t GroupType) string {
	if t == ConsumerGroup {
		return "group epoch"
	}
	return "generation"
}
