package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/client"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// consumerWorld is the default topology with n members under
// group.protocol=consumer.
func consumerWorld(t *testing.T, n int, tweak func(*Config)) *World {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Client.GroupProtocol = string(ConsumerGroup)
	if tweak != nil {
		tweak(&cfg)
	}
	topo := DefaultTopology()
	topo.Members = n
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	keepBodies(w)
	return w
}

// keepBodies makes w keep the packets it sends, bodies included, for
// withBody: the trace keeps no bodies.
func keepBodies(w *World) { w.env.KeepForTest() }

// withBody gives a packet of the trace the body it was sent with, and its
// request's, in a world that keeps them (keepBodies).
func withBody(w *World, p *Packet) *Packet {
	if live := w.env.KeepForTest()[p.ID]; live != nil {
		p.Body = live.Body
	}
	if p.Req != nil {
		if live := w.env.KeepForTest()[p.Req.ID]; live != nil {
			p.Req.Body = live.Body
		}
	}
	return p
}

// stepDisjoint runs n ticks with the invariant checker on every tick and
// every client's owned partitions disjoint (no partition owned by two live,
// non-zombie processes at once), calling each (if not nil) after every tick.
func stepDisjoint(t *testing.T, w *World, c *Checker, n int, each func()) {
	t.Helper()
	for i := 0; i < n; i++ {
		w.Step()
		if err := c.Check(w); err != nil {
			t.Fatal(err)
		}
		owner := map[TopicPartition]string{}
		for _, m := range w.current {
			if !m.Alive || m.Zombie || !m.InGroup() {
				continue
			}
			for _, tp := range m.Fetchable() {
				if o, ok := owner[tp]; ok {
					t.Fatalf("tick %d: %s is consumed by both %s and %s", w.Tick, tp, o, m.Client)
				}
				owner[tp] = m.Client
			}
		}
		if each != nil {
			each()
		}
	}
}

func eventsOf(w *World, kind EventKind, member string) []Event {
	var out []Event
	for _, e := range w.Events.All() {
		if e.Kind == kind && (member == "" || e.Member == member) {
			out = append(out, e)
		}
	}
	return out
}

func packetsOf(w *World, typ API, from string, response bool) []*Packet {
	var out []*Packet
	for _, p := range w.Packets.All() {
		if p.Type == typ && p.Response == response && (from == "" || p.From == from || (response && p.To == from)) {
			out = append(out, withBody(w, p))
		}
	}
	return out
}

// summariesWith counts the requests of a type (from a client, or anyone)
// whose summary contains s.
func summariesWith(w *World, typ API, from, s string) int {
	n := 0
	for _, p := range packetsOf(w, typ, from, false) {
		if strings.Contains(p.Summary, s) {
			n++
		}
	}
	return n
}

// Three members join one by one: no JoinGroup or SyncGroup, no moment where
// C1 consumes nothing, a group epoch per join, C1 revokes (after
// committing what it consumed) before the newcomer gets what C1 gave up,
// and the newcomers wait in UNRELEASED_PARTITIONS meanwhile.
func TestConsumerMembersJoinOneByOne(t *testing.T) {
	w := consumerWorld(t, 1, nil)
	c := NewChecker()
	states := map[string]map[string]bool{}
	c1 := w.current["C1"]
	each := func() {
		for _, gm := range w.Group.Members() {
			if states[gm.ClientID] == nil {
				states[gm.ClientID] = map[string]bool{}
			}
			states[gm.ClientID][gm.MemberState] = true
		}
		if len(c1.Fetchable()) == 0 {
			t.Fatalf("tick %d: C1 consumes nothing (a stop-the-world)", w.Tick)
		}
	}
	stepDisjoint(t, w, c, 3, each)
	for i, cl := range []string{"C2", "C3"} {
		if err := w.Join(cl, false, nil); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 60 && !(w.GroupSettled() && w.Group.Describe().GroupEpoch == 2+i); k++ {
			stepDisjoint(t, w, c, 1, each)
		}
		if !w.GroupSettled() || w.Group.Describe().GroupEpoch != 2+i {
			t.Fatalf("after %s joined: settled %v, group epoch %d, want settled at %d", cl, w.GroupSettled(), w.Group.Describe().GroupEpoch, 2+i)
		}
	}
	if n := len(packetsOf(w, JoinGroup, "", false)) + len(packetsOf(w, SyncGroup, "", false)); n != 0 {
		t.Errorf("%d JoinGroup/SyncGroup packets under the consumer protocol", n)
	}
	for _, gm := range w.Group.Members() {
		if len(gm.Assignment) != 2 || gm.MemberEpoch != 3 || gm.MemberState != "STABLE" {
			t.Errorf("%s: %v at epoch %d in %s, want 2 partitions, STABLE at epoch 3", gm.MemberID, gm.Assignment, gm.MemberEpoch, gm.MemberState)
		}
	}
	if !states["C1"]["UNREVOKED_PARTITIONS"] || !states["C2"]["UNRELEASED_PARTITIONS"] || !states["C3"]["UNRELEASED_PARTITIONS"] {
		t.Errorf("member states seen: %v; want C1 UNREVOKED_PARTITIONS, C2 and C3 UNRELEASED_PARTITIONS", states)
	}
	// Revocation first: every partition C1 gave up is in C1's revoke
	// event before the newcomer's assignment names it, and C1 committed it
	// before revoking (the auto-commit before revocation).
	revokedAt := map[TopicPartition]int{}
	for _, e := range eventsOf(w, EvRevoked, "C1") {
		for _, tp := range w.layout.Inputs() {
			if strings.Contains(e.Text, w.layout.PartList([]TopicPartition{tp})[1:len(w.layout.PartList([]TopicPartition{tp}))-1]) {
				revokedAt[tp] = e.Tick
			}
		}
	}
	for _, cl := range []string{"C2", "C3"} {
		for _, tp := range w.current[cl].Owned {
			at, ok := revokedAt[tp]
			if !ok {
				t.Errorf("%s owns %s, which C1 never revoked", cl, tp)
				continue
			}
			for _, e := range eventsOf(w, EvAssigned, cl) {
				if strings.Contains(e.Text, w.layout.PartList([]TopicPartition{tp})[1:len(w.layout.PartList([]TopicPartition{tp}))-1]) && e.Tick <= at {
					t.Errorf("%s was assigned %s at tick %d, C1 revoked it at %d", cl, tp, e.Tick, at)
				}
			}
			committed := false
			for _, r := range w.Group.Offsets.Log.All() {
				if r.TP == tp && r.MemberID == "C1-1" && r.Tick <= at {
					committed = true
				}
			}
			if !committed {
				t.Errorf("C1 revoked %s at tick %d without committing it first", tp, at)
			}
		}
	}
	// The pause meter counts only what moved: never a partition C1 kept.
	if w.Meter.Total == 0 {
		t.Error("the pause meter counted nothing, though partitions moved")
	}
	for _, e := range w.Meter.Entries {
		for _, tp := range e.Partitions {
			if c1.Hooks().Owns(tp) {
				t.Errorf("group epoch %d paused %s, which C1 kept throughout", e.Generation, tp)
			}
		}
	}
	if summariesWith(w, OffsetCommit, "C1", "before reconciling") == 0 {
		t.Error("C1 sent no auto-commit before reconciling")
	}
}

// A crashed member is fenced group.consumer.session.timeout.ms after its
// last heartbeat; the survivor takes its partitions at a new epoch.
func TestConsumerSessionTimeout(t *testing.T) {
	w := consumerWorld(t, 2, nil)
	c := NewChecker()
	stepDisjoint(t, w, c, 4, nil)
	if err := w.CrashNow("C2"); err != nil {
		t.Fatal(err)
	}
	stepDisjoint(t, w, c, 20, nil)
	last := -1
	for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C2", false) {
		last = p.Delivered
	}
	removed := eventsOf(w, EvRemoved, "C2")
	if len(removed) != 1 || removed[0].Tick != last+w.Cfg.ConsumerSessionTimeout || !strings.Contains(removed[0].Text, "session timeout") {
		t.Fatalf("removals of C2 %v; want one, %d ticks after its last heartbeat at %d", removed, w.Cfg.ConsumerSessionTimeout, last)
	}
	if g := w.Group; g.Describe().GroupEpoch != 2 || len(g.Members()) != 1 || len(g.Members()[0].Assignment) != 6 || !w.GroupSettled() {
		t.Fatalf("group epoch %d, members %v, settled %v; want epoch 2, C1-1 with all six", g.Describe().GroupEpoch, memberIDs(g.Members()), w.GroupSettled())
	}
}

// A member that spends longer than max.poll.interval.ms outside poll()
// leaves with epoch -1, loses its partitions, and rejoins at its next
// poll() with epoch 0 and the same member id.
func TestConsumerPollTimeoutLeavesAndRejoins(t *testing.T) {
	w := consumerWorld(t, 2, nil)
	c := NewChecker()
	if err := w.Slow("C2"); err != nil {
		t.Fatal(err)
	}
	stepDisjoint(t, w, c, 60, nil)
	var leave, rejoin *Packet
	for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C2", false) {
		r := p.Body.(*wire.ConsumerGroupHeartbeatRequest)
		if r.MemberEpoch == LeaveGroupMemberEpoch && leave == nil {
			leave = p
		}
		if leave != nil && r.MemberEpoch == 0 && rejoin == nil {
			rejoin = p
		}
	}
	if leave == nil || rejoin == nil {
		t.Fatal("C2 sent no leave heartbeat (epoch -1) followed by a rejoin (epoch 0)")
	}
	if leave.Body.(*wire.ConsumerGroupHeartbeatRequest).MemberID != "C2-1" || rejoin.Body.(*wire.ConsumerGroupHeartbeatRequest).MemberID != "C2-1" {
		t.Errorf("member ids %s then %s; the consumer protocol's client keeps its own (C2-1)", leave.Body.(*wire.ConsumerGroupHeartbeatRequest).MemberID, rejoin.Body.(*wire.ConsumerGroupHeartbeatRequest).MemberID)
	}
	if len(eventsOf(w, EvPollTimeout, "C2")) != 1 {
		t.Error("no poll-timeout event for C2")
	}
	if !w.GroupSettled() || w.Group.MemberByID("C2-1") == nil || len(w.Group.MemberByID("C2-1").Assignment) != 3 {
		t.Errorf("after the rejoin: settled %v, members %s", w.GroupSettled(), memberIDs(w.Group.Members()))
	}
}

// A static member that closes leaves with epoch -2 and keeps its
// partitions; its next instance (same group.instance.id, new member id)
// takes its place and its assignment without a new group epoch. A new
// instance while the old one still holds the instance id (it crashed, sent
// no leave) is refused with UNRELEASED_INSTANCE_ID and stops.
func TestConsumerStaticMemberLeavesAndReturns(t *testing.T) {
	// A session long enough for close() and the next instance's start.
	w := consumerWorld(t, 1, func(cfg *Config) { cfg.ConsumerSessionTimeout = 20 })
	c := NewChecker()
	if err := w.Join("C2", true, nil); err != nil {
		t.Fatal(err)
	}
	stepDisjoint(t, w, c, 40, nil)
	old := w.Group.MemberByID("C2-1")
	if old == nil || !w.GroupSettled() {
		t.Fatal("C2 did not settle as C2-1")
	}
	held, epoch := store.Copy(old.Assignment), w.Group.Describe().GroupEpoch
	if err := w.Close("C2"); err != nil {
		t.Fatal(err)
	}
	// close() commits, then leaves with epoch -2: the member stays until
	// its session times out.
	for k := 0; k < 8; k++ {
		if gm := w.Group.MemberByID("C2-1"); gm != nil && gm.MemberEpoch < 0 {
			break
		}
		stepDisjoint(t, w, c, 1, nil)
	}
	if gm := w.Group.MemberByID("C2-1"); gm == nil || gm.MemberEpoch != LeaveGroupStaticMemberEpoch || !slices.Equal(gm.Assignment, held) {
		t.Fatalf("after close: C2-1 %+v; want it kept at epoch -2 with %v", gm, held)
	}
	if err := w.Join("C2", true, nil); err != nil {
		t.Fatal(err)
	}
	stepDisjoint(t, w, c, 20, nil)
	gm := w.Group.MemberByID("C2-2")
	if gm == nil || w.Group.MemberByID("C2-1") != nil || !slices.Equal(gm.Assignment, held) || w.Group.Describe().GroupEpoch != epoch {
		t.Fatalf("C2-2 %+v, group epoch %d (was %d); want C2-2 in C2-1's place with %v, same group epoch", gm, w.Group.Describe().GroupEpoch, epoch, held)
	}
	if len(eventsOf(w, EvStaticRejoin, "C2")) != 1 {
		t.Error("no static-rejoin event")
	}
	// A crash sends no leave: the instance id stays held.
	if err := w.CrashNow("C2"); err != nil {
		t.Fatal(err)
	}
	if err := w.Join("C2", true, nil); err != nil {
		t.Fatal(err)
	}
	stepDisjoint(t, w, c, 4, nil)
	refused := false
	for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C2", true) {
		if p.Error == UnreleasedInstanceID {
			refused = true
		}
	}
	if !refused || w.current["C2"].Alive {
		t.Fatalf("a new C2 while C2-2 holds the instance id: refused %v, alive %v; want UNRELEASED_INSTANCE_ID and a stop", refused, w.current["C2"].Alive)
	}
}

// Commits carry the member epoch: the current one is taken, a stale one is
// answered STALE_MEMBER_EPOCH, an unknown member UNKNOWN_MEMBER_ID; a
// heartbeat with an epoch ahead of the coordinator's FENCED_MEMBER_EPOCH.
func TestConsumerCommitAndHeartbeatValidation(t *testing.T) {
	w := consumerWorld(t, 2, nil)
	c := NewChecker()
	stepDisjoint(t, w, c, 2, nil)
	g := w.Group
	gm := g.MemberByID("C1-1")
	tp := gm.Assignment[0]
	send := func(typ API, body any) *Packet {
		p := &Packet{From: "C1", FromInc: 1, To: Broker, Type: typ, Summary: "by hand", Body: body}
		w.env.Send(p)
		stepDisjoint(t, w, c, 1, nil)
		for _, q := range w.Packets.All() {
			if q.Req != nil && q.Req.ID == p.ID {
				return q
			}
		}
		t.Fatalf("%s not answered", typ)
		return nil
	}
	cases := []struct {
		member string
		epoch  int
		want   ErrorCode
	}{{"C1-1", gm.MemberEpoch, None}, {"C1-1", gm.MemberEpoch - 1, StaleMemberEpoch}, {"C1-1", gm.MemberEpoch + 1, StaleMemberEpoch}, {"C9-1", gm.MemberEpoch, UnknownMemberID}}
	for _, cs := range cases {
		resp := send(OffsetCommit, &wire.OffsetCommitRequest{MemberID: cs.member, Generation: cs.epoch, Partitions: []TopicPartition{tp}, Offsets: []int{0}})
		if resp.Error != cs.want {
			t.Errorf("OffsetCommit %s epoch %d: %s, want %s", cs.member, cs.epoch, resp.Error, cs.want)
		}
		// OffsetMetadataManager.validateTransactionalOffsetCommit answers a
		// stale epoch with ILLEGAL_GENERATION.
		txnWant := cs.want
		if txnWant == StaleMemberEpoch {
			txnWant = IllegalGeneration
		}
		if code := g.Hooks().ValidateOffsetCommit(cs.member, "", cs.epoch, true); code != txnWant {
			t.Errorf("TxnOffsetCommit %s epoch %d: %s, want %s", cs.member, cs.epoch, code, txnWant)
		}
	}
	resp := send(ConsumerGroupHeartbeat, &wire.ConsumerGroupHeartbeatRequest{MemberID: "C1-1", Client: "C1", Inc: 1, MemberEpoch: gm.MemberEpoch + 1, RebalanceTimeout: -1})
	if resp.Error != FencedMemberEpoch {
		t.Errorf("heartbeat with an epoch ahead: %s, want FENCED_MEMBER_EPOCH", resp.Error)
	}
}

// Transactions under the consumer protocol: members join and leave, every
// input record has exactly one visible invoice, and TxnOffsetCommit
// carries the member epoch.
func TestConsumerTransactions(t *testing.T) {
	w := consumerWorld(t, 1, func(cfg *Config) {
		cfg.Client.Commit = CommitAfter
		cfg.Client.TransactionalID = "tx-" + ClientPlaceholder
		cfg.Client.Idempotence = true
	})
	c := NewChecker()
	stepDisjoint(t, w, c, 5, nil)
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	stepDisjoint(t, w, c, 15, nil)
	if err := w.Join("C3", false, nil); err != nil {
		t.Fatal(err)
	}
	stepDisjoint(t, w, c, 15, nil)
	if err := w.Close("C1"); err != nil {
		t.Fatal(err)
	}
	if !settle(t, w, 3000) {
		t.Fatal("not settled")
	}
	d := w.Delivery("read_committed")
	if d.Lost > 0 || d.Duplicates > 0 {
		t.Errorf("read_committed: lost %v, duplicates %v", d.LostNames, d.DuplicateNames)
	}
	if summariesWith(w, TxnOffsetCommit, "", ", epoch ") == 0 {
		t.Error("no TxnOffsetCommit carried a member epoch")
	}
}

// A rolling upgrade of four classic members: each restarts with
// group.protocol=consumer. The first consumer-protocol member converts the
// classic group to a consumer group (group.consumer.migration.policy
// bidirectional); the classic members stay in it, rejoining with JoinGroup
// and SyncGroup, until their own restart; the group ends a consumer group
// of four consumer-protocol members, settled, every record consumed.
func TestConsumerRollingUpgradeFromClassic(t *testing.T) {
	for _, strategy := range []string{"range", "cooperative-sticky"} {
		t.Run(strategy, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Client.Assignor = strategy
			cfg.Client.Commit = CommitAfter
			topo := DefaultTopology()
			topo.Members = 4
			w, err := New(topo, cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := NewChecker()
			stepChecked(t, w, c, 5)
			if err := w.Set("", "group.protocol", "consumer"); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 4; i++ {
				cl := "C" + itoa(i)
				if err := w.Restart(cl); err != nil {
					t.Fatal(err)
				}
				stepUntil(t, w, c, 400, func() bool { return w.Tick > 0 && w.GroupSettled() })
				if !w.GroupSettled() {
					t.Fatalf("after restarting %s: not settled (group %s %s)", cl, w.Group.Type(), w.Group.State())
				}
				g := w.Group
				if g.Type() != ConsumerGroup {
					t.Fatalf("after restarting %s: group type %s, want consumer", cl, g.Type())
				}
				classic := 0
				for _, gm := range g.Members() {
					if gm.ClassicMember {
						classic++
					}
				}
				if len(g.Members()) != 4 || classic != 4-i {
					t.Fatalf("after restarting %s: members %s, %d classic; want 4 members, %d classic", cl, memberIDs(g.Members()), classic, 4-i)
				}
			}
			if n := len(eventsOf(w, EvGroupState, "")); n == 0 {
				t.Error("no group-state events")
			}
			converted := 0
			for _, e := range eventsOf(w, EvGroupState, "") {
				if strings.Contains(e.Text, "converted to a consumer group") {
					converted++
				}
			}
			if converted != 1 {
				t.Errorf("%d conversions to a consumer group, want 1", converted)
			}
			for _, tp := range w.layout.Inputs() {
				if err := w.ProduceInput(tp, 1); err != nil {
					t.Fatal(err)
				}
			}
			if !settle(t, w, 2000) {
				t.Fatal("not settled and caught up after the upgrade")
			}
			if d := w.Delivery("read_uncommitted"); d.Lost > 0 {
				t.Errorf("commit after processing lost %v during the upgrade", d.LostNames)
			}
		})
	}
}

// A heartbeat that gets no answer within request.timeout.ms is followed
// by a full one (rebalance timeout, subscription,
// assignor, owned partitions), as AbstractHeartbeatRequestManager.onFailure
// forgets the sent fields; the coordinator answers it with the assignment.
func TestConsumerHeartbeatAfterFailureIsFull(t *testing.T) {
	// A session timeout longer than request.timeout.ms, as Kafka's
	// defaults have it (45 s against 30 s), so the retry is in time.
	w := consumerWorld(t, 2, func(c *Config) { c.ConsumerSessionTimeout = 20 })
	c := NewChecker()
	stepChecked(t, w, c, 40)
	if !w.GroupSettled() {
		t.Fatal("group not settled")
	}
	w.Drop(DropRule{Type: ConsumerGroupHeartbeat, From: "C2", Count: 1})
	start := w.Tick
	stepChecked(t, w, c, 30)
	var dropped, retry *Packet
	for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C2", false) {
		if p.Sent <= start {
			continue
		}
		if dropped == nil {
			dropped = p
			continue
		}
		retry = p
		break
	}
	if dropped == nil || retry == nil {
		t.Fatal("no heartbeats after the drop")
	}
	r := retry.Body.(*wire.ConsumerGroupHeartbeatRequest)
	if want := dropped.Sent + w.Cfg.Client.RequestTimeout + client.ConsumerRetryBackoff; retry.Sent != want {
		t.Errorf("retry sent at tick %d, want %d (request timeout and retry backoff after %d)", retry.Sent, want, dropped.Sent)
	}
	if r.MemberEpoch <= 0 || r.RebalanceTimeout < 0 || !r.TopicsSent || !r.OwnedSent || r.Assignor == "" {
		t.Errorf("retry is not a full heartbeat: %+v", r)
	}
	d := dropped.Body.(*wire.ConsumerGroupHeartbeatRequest)
	if d.TopicsSent || d.RebalanceTimeout >= 0 {
		t.Errorf("the dropped heartbeat was already full: %+v", d)
	}
	for _, p := range w.Packets.All() {
		if p.Req != nil && p.Req.ID == retry.ID {
			p = withBody(w, p)
			if resp, ok := p.Body.(*wire.ConsumerGroupHeartbeatResponse); !ok || !resp.HasAssignment {
				t.Errorf("the answer to a full heartbeat carries no assignment: %+v", p.Body)
			}
		}
	}
	// The next one is partial again.
	for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C2", false) {
		if p.Sent > retry.Sent {
			if q := p.Body.(*wire.ConsumerGroupHeartbeatRequest); q.TopicsSent || q.RebalanceTimeout >= 0 {
				t.Errorf("heartbeat at %d after the full retry is full again: %+v", p.Sent, q)
			}
			break
		}
	}
}

// A member naming another server assignor does not bump the group epoch
// (GroupMetadataManager.hasMemberSubscriptionChanged looks at the
// subscription only); the coordinator stores the name for the next target
// computation.
func TestConsumerAssignorChangeDoesNotBumpEpoch(t *testing.T) {
	w := consumerWorld(t, 2, nil)
	c := NewChecker()
	stepChecked(t, w, c, 40)
	g := w.Group
	gm := g.MemberByID("C1-1")
	if !w.GroupSettled() || gm == nil || gm.Strategy != "uniform" {
		t.Fatalf("not settled with C1-1 on uniform: %v %+v", w.GroupSettled(), gm)
	}
	epoch, target := g.Describe().GroupEpoch, store.Copy(gm.Target)
	p := &Packet{From: "C1", FromInc: 1, To: Broker, Type: ConsumerGroupHeartbeat, Summary: "by hand",
		Body: &wire.ConsumerGroupHeartbeatRequest{MemberID: "C1-1", Client: "C1", Inc: 1, MemberEpoch: gm.MemberEpoch, RebalanceTimeout: 12,
			Topics: store.Copy(gm.Topics), TopicsSent: true, Owned: store.Copy(gm.Assignment), OwnedSent: true, Assignor: "range"}}
	w.env.Send(p)
	stepChecked(t, w, c, 1)
	if g.Describe().GroupEpoch != epoch {
		t.Errorf("group epoch %d after an assignor change, want %d", g.Describe().GroupEpoch, epoch)
	}
	gm = g.MemberByID("C1-1")
	if gm.Strategy != "range" || !slices.Equal(gm.Target, target) {
		t.Errorf("C1-1 assignor %q target %v; want range, target unchanged %v", gm.Strategy, gm.Target, target)
	}
}

// The leave heartbeat carries the owned partitions as an empty list
// (transitionToSendingLeaveGroup clears the local assignment); after
// close() also an empty subscription (leaveGroup unsubscribes), after a
// poll timeout no subscription (unchanged, so unsent).
func TestConsumerLeaveHeartbeatFields(t *testing.T) {
	leaveOf := func(w *World, client string) *wire.ConsumerGroupHeartbeatRequest {
		for _, p := range packetsOf(w, ConsumerGroupHeartbeat, client, false) {
			if r := p.Body.(*wire.ConsumerGroupHeartbeatRequest); r.MemberEpoch == LeaveGroupMemberEpoch {
				return r
			}
		}
		t.Fatalf("%s sent no leave heartbeat", client)
		return nil
	}
	w := consumerWorld(t, 2, nil)
	c := NewChecker()
	stepChecked(t, w, c, 40)
	if err := w.Close("C2"); err != nil {
		t.Fatal(err)
	}
	stepChecked(t, w, c, 20)
	if r := leaveOf(w, "C2"); !r.TopicsSent || len(r.Topics) != 0 || !r.OwnedSent || len(r.Owned) != 0 {
		t.Errorf("close() leave: %+v; want an empty subscription and empty owned partitions", r)
	}
	w = consumerWorld(t, 2, nil)
	c = NewChecker()
	if err := w.Slow("C2"); err != nil {
		t.Fatal(err)
	}
	stepChecked(t, w, c, 60)
	if r := leaveOf(w, "C2"); r.TopicsSent || !r.OwnedSent || len(r.Owned) != 0 {
		t.Errorf("poll-timeout leave: %+v; want no subscription and empty owned partitions", r)
	}
}

// A member leaves ACKNOWLEDGING when its acknowledging heartbeat is sent
// (AbstractMembershipManager.onHeartbeatRequestGenerated), not when it is
// answered.
func TestConsumerAcknowledgedWhenSent(t *testing.T) {
	w := consumerWorld(t, 1, nil)
	c := NewChecker()
	stepChecked(t, w, c, 3)
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	acks := 0
	seen := map[int]bool{}
	for i := 0; i < 40; i++ {
		stepChecked(t, w, c, 1)
		for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C1", false) {
			r := p.Body.(*wire.ConsumerGroupHeartbeatRequest)
			if seen[p.ID] || !r.OwnedSent || r.MemberEpoch <= 0 {
				continue
			}
			seen[p.ID] = true
			acks++
			m := w.current["C1"]
			if m.Hooks().HeartbeatInFlight() == p && m.ConsumerState() == "ACKNOWLEDGING" {
				t.Errorf("tick %d: C1 still ACKNOWLEDGING with its acknowledgement in flight", w.Tick)
			}
		}
	}
	if acks == 0 {
		t.Fatal("C1 sent no acknowledging heartbeat")
	}
}

// The heartbeat interval runs from the send (AbstractHeartbeatRequestManager.makeHeartbeatRequest
// resets the timer), not from the answer: a settled member heartbeats every
// interval. With an interval shorter than the round trip, one heartbeat is
// in flight at a time and the next goes when it is answered.
func TestConsumerHeartbeatIntervalFromSend(t *testing.T) {
	for _, tc := range []struct{ interval, period int }{{2, 2}, {3, 3}, {1, 2}} {
		w := consumerWorld(t, 2, func(c *Config) { c.ConsumerHeartbeatInterval = tc.interval })
		c := NewChecker()
		stepChecked(t, w, c, 30)
		if !w.GroupSettled() {
			t.Fatalf("interval %d: group not settled", tc.interval)
		}
		start := w.Tick
		stepChecked(t, w, c, 30)
		var sent []int
		for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C1", false) {
			if p.Sent > start {
				sent = append(sent, p.Sent)
			}
		}
		if len(sent) < 5 {
			t.Fatalf("interval %d: heartbeats sent at %v", tc.interval, sent)
		}
		for i := 1; i < len(sent); i++ {
			if sent[i]-sent[i-1] != tc.period {
				t.Fatalf("interval %d: heartbeats sent at %v, want one every %d ticks", tc.interval, sent, tc.period)
			}
		}
		// Never two in flight: each is sent no earlier than the answer to the one before.
		answered := map[int]int{} // request ID -> the tick its answer arrived
		for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C1", true) {
			answered[p.Req.ID] = p.Delivered
		}
		var prev *Packet
		for _, p := range packetsOf(w, ConsumerGroupHeartbeat, "C1", false) {
			if prev != nil {
				if at, ok := answered[prev.ID]; !ok || p.Sent < at {
					t.Fatalf("interval %d: heartbeat at %d sent before the one at %d was answered (%d, %v)", tc.interval, p.Sent, prev.Sent, at, ok)
				}
			}
			prev = p
		}
	}
}

// Under the default settings one lost heartbeat does not fence a member
// (as with Kafka's defaults: the resend after request.timeout.ms and the
// retry backoff arrives within the session timeout).
func TestConsumerOneLostHeartbeatDoesNotFence(t *testing.T) {
	for _, member := range []string{"C1", "C2"} {
		for skip := 0; skip < 2; skip++ {
			w := consumerWorld(t, 2, nil)
			c := NewChecker()
			stepChecked(t, w, c, 30+skip)
			if !w.GroupSettled() {
				t.Fatal("group not settled")
			}
			epoch := w.Group.Describe().GroupEpoch
			w.Drop(DropRule{Type: ConsumerGroupHeartbeat, From: member, Count: 1})
			stepChecked(t, w, c, 40)
			if len(w.PendingDrops()) != 0 {
				t.Fatalf("%s: no heartbeat was dropped", member)
			}
			if f := eventsOf(w, EvFenced, member); len(f) != 0 {
				t.Errorf("%s (after %d ticks): one lost heartbeat fenced it: %v", member, 30+skip, f)
			}
			if r := eventsOf(w, EvRemoved, member); len(r) != 0 {
				t.Errorf("%s: removed: %v", member, r)
			}
			if len(eventsOf(w, EvRetry, member)) != 1 {
				t.Errorf("%s: retries %v, want one", member, eventsOf(w, EvRetry, member))
			}
			if w.Group.Describe().GroupEpoch != epoch || !w.GroupSettled() {
				t.Errorf("%s: group epoch %d -> %d, settled %v", member, epoch, w.Group.Describe().GroupEpoch, w.GroupSettled())
			}
		}
	}
}

// The auto-commit before revocation is retried when unanswered within
// request.timeout.ms (CommitRequestManager.autoCommitSyncBeforeRevocationWithRetries
// retries retriable errors until the rebalance timeout), then the member
// revokes; it is not left waiting for an answer that never comes.
func TestConsumerCommitBeforeRevokeRetried(t *testing.T) {
	w := consumerWorld(t, 1, nil)
	c := NewChecker()
	stepChecked(t, w, c, 6)
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	c1 := w.current["C1"]
	for k := 0; k < 20 && !c1.Hooks().CommitWait(); k++ {
		stepChecked(t, w, c, 1)
	}
	if !c1.Hooks().CommitWait() {
		t.Fatal("C1 never committed before revoking")
	}
	first := c1.Hooks().CommitPacket()
	w.Drop(DropRule{Type: OffsetCommit, Response: true, To: "C1", Count: 1})
	stepChecked(t, w, c, 30)
	var retry *Packet
	for _, p := range packetsOf(w, OffsetCommit, "C1", false) {
		if p.Sent > first.Sent && p.Body.(*wire.OffsetCommitRequest).BeforeReconcile {
			retry = p
			break
		}
	}
	if retry == nil {
		t.Fatal("the auto-commit before revoking was not retried")
	}
	if want := first.Sent + w.Cfg.Client.RequestTimeout + client.ConsumerRetryBackoff; retry.Sent != want {
		t.Errorf("retry sent at %d, want %d", retry.Sent, want)
	}
	revoked := false
	for _, e := range eventsOf(w, EvRevoked, "C1") {
		if e.Tick > retry.Sent {
			revoked = true
		}
	}
	if !revoked || len(eventsOf(w, EvFenced, "C1")) != 0 || !w.GroupSettled() || w.Group.Describe().GroupEpoch != 2 {
		t.Errorf("revoked after the retry %v, fenced %v, settled %v, epoch %d", revoked, eventsOf(w, EvFenced, "C1"), w.GroupSettled(), w.Group.Describe().GroupEpoch)
	}
}

// A consumer-protocol OffsetFetch carries the member id and epoch, and a
// consumer group checks them as ConsumerGroup.validateOffsetFetch does.
func TestConsumerOffsetFetchValidated(t *testing.T) {
	w := consumerWorld(t, 1, nil)
	c := NewChecker()
	stepChecked(t, w, c, 4)
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 40 && !w.GroupSettled(); k++ {
		stepChecked(t, w, c, 1)
	}
	fetches := packetsOf(w, OffsetFetch, "C2", false)
	if len(fetches) == 0 {
		t.Fatal("C2 Record no offsets")
	}
	for _, p := range fetches {
		if r := p.Body.(*wire.OffsetFetchRequest); !r.HasMember || r.MemberID != "C2-1" || r.MemberEpoch <= 0 {
			t.Errorf("OffsetFetch at %d without the member id and epoch: %+v", p.Sent, r)
		}
	}
	m := w.current["C2"]
	tp := m.Owned[0]
	epoch := w.Group.MemberByID("C2-1").MemberEpoch
	cases := []struct {
		r    *wire.OffsetFetchRequest
		want ErrorCode
	}{
		{&wire.OffsetFetchRequest{MemberID: "C2-1", MemberEpoch: epoch, HasMember: true}, None},
		{&wire.OffsetFetchRequest{MemberID: "C2-1", MemberEpoch: epoch - 1, HasMember: true}, StaleMemberEpoch},
		{&wire.OffsetFetchRequest{MemberID: "C9-1", MemberEpoch: epoch, HasMember: true}, UnknownMemberID},
		{&wire.OffsetFetchRequest{MemberEpoch: -1}, None}, // an admin client or a classic client
	}
	var sent []*Packet
	for _, tc := range cases {
		tc.r.Partitions = []TopicPartition{tp}
		sent = append(sent, m.Hooks().Send(&Packet{Type: OffsetFetch, Summary: "test", Body: tc.r}))
	}
	stepChecked(t, w, c, 2)
	for i, tc := range cases {
		found := false
		for _, p := range packetsOf(w, OffsetFetch, "C2", true) {
			if p.Req.ID == sent[i].ID {
				found = true
				if p.Error != tc.want {
					t.Errorf("%+v answered %s, want %s", tc.r, p.Error, tc.want)
				}
			}
		}
		if !found {
			t.Errorf("%+v not answered", tc.r)
		}
	}
}

// A classic member inside a consumer group that must rejoin learns it from
// a heartbeat answered REBALANCE_IN_PROGRESS, and that answer starts its
// join timer (GroupMetadataManager.classicGroupHeartbeatToConsumerGroup:
// scheduleConsumerGroupJoinTimeoutIfAbsent). A member whose JoinGroup
// answer is still unread sends no heartbeats (AbstractCoordinator's
// HeartbeatThread waits while PREPARING_REBALANCE), so it is not told and
// no timer starts until it reads the answer and heartbeats again.
func TestClassicMemberToldByItsFirstHeartbeat(t *testing.T) {
	c := NewChecker()
	w := classicMembersWorld(t, c)
	m := w.Member("C2")
	id := m.MemberID
	// C2 has sent a JoinGroup and not read the answer yet.
	join, _ := inFlightJoin(m, PhaseJoining)
	m.Phase = PhaseJoining
	epoch, from := w.Group.Describe().GroupEpoch, w.Packets.Len()
	if err := w.Join("C5", false, nil); err != nil { // the group epoch moves: C2 must rejoin
		t.Fatal(err)
	}
	stepUntil(t, w, c, 20, func() bool { return w.Group.Describe().GroupEpoch > epoch })
	stepChecked(t, w, c, 2)
	told := func() int {
		n := 0
		for i, p := range w.Packets.All() {
			if i >= from && p.Type == RebalanceNotification && p.To == "C2" {
				n++
			}
		}
		return n
	}
	gm := w.Group.MemberByID(id)
	if gm == nil || gm.MemberEpoch >= w.Group.Describe().GroupEpoch {
		t.Fatalf("C2's member %s is not behind the group epoch %d", id, w.Group.Describe().GroupEpoch)
	}
	if n := told(); n != 0 || w.Group.Hooks().JoinTimer(gm.MemberID) != 0 {
		t.Fatalf("C2, not heartbeating, was told to rejoin %d times (join timer %d)", n, w.Group.Hooks().JoinTimer(gm.MemberID))
	}
	// It reads the answer: COMPLETING_REBALANCE, heartbeats again, and its
	// first heartbeat is answered REBALANCE_IN_PROGRESS.
	m.Hooks().Receive(&Packet{From: Broker, To: m.Client, ToInc: m.Inc, Type: JoinGroup, Response: true, Req: join,
		Body: &wire.JoinGroupResponse{MemberID: id, Generation: gm.MemberEpoch, Protocol: m.Cfg.Assignor}})
	m.Hooks().TakeJoinAnswer() // read at once, or by its next poll() if it is busy
	if m.Phase != PhaseSyncing {
		t.Fatalf("C2 %s after its JoinGroup answer, want Syncing", m.Phase)
	}
	if n := told(); n != 1 || w.Group.Hooks().JoinTimer(gm.MemberID) == 0 {
		t.Errorf("C2 heartbeating again: told %d times, join timer %d; want told once and the timer running", n, w.Group.Hooks().JoinTimer(gm.MemberID))
	}
}

// OffsetFetch carries the member id and epoch while the member has one
// (CommitRequestManager.OffsetFetchRequestState, v9+;
// ConsumerGroup.validateOffsetFetch), and STALE_MEMBER_EPOCH is retried
// with the latest epoch (fetchOffsetsWithRetries:
// isStaleEpochErrorAndValidEpochAvailable). In random case 0 (consumer)
// C6's interval heartbeat goes in the same tick as the OffsetFetch for
// the partitions it was just assigned, ahead of it, and moves it to the
// next epoch: the OffsetFetch is answered STALE_MEMBER_EPOCH and asked
// again with the new epoch after the retry backoff (issue 28, item 10).
func TestConsumerOffsetFetchStaleEpochRetried(t *testing.T) {
	spec := propertyCase(ConsumerGroup)
	spec.ticks, spec.clients, spec.static = 250, 6, fixed(true)
	sc := seedWorld(t, 0, spec)
	w := sc.w
	keepBodies(w)
	runSchedule(t, w, sc.sched, 250)
	stale := 0
	for _, p := range packetsOf(w, OffsetFetch, "", true) {
		if p.Error != StaleMemberEpoch {
			continue
		}
		stale++
		sent := p.Req.Body.(*wire.OffsetFetchRequest)
		if !sent.HasMember || sent.MemberEpoch <= 0 {
			t.Errorf("t=%d: the refused OffsetFetch carried member %q epoch %d (has member %v), want the member's epoch", p.Sent, sent.MemberID, sent.MemberEpoch, sent.HasMember)
		}
		var retry *Packet
		for _, q := range packetsOf(w, OffsetFetch, p.To, false) {
			if q.Sent > p.Sent && q.FromInc == p.ToInc {
				retry = q
				break
			}
		}
		if retry == nil {
			t.Fatalf("t=%d: %s's OffsetFetch answered STALE_MEMBER_EPOCH was never asked again", p.Sent, p.To)
		}
		again := retry.Body.(*wire.OffsetFetchRequest)
		if again.MemberEpoch <= sent.MemberEpoch || retry.Sent > p.Sent+1+client.ConsumerRetryBackoff {
			t.Errorf("t=%d: asked again at t=%d with epoch %d; want the newer epoch (not %d) after the retry backoff", p.Sent, retry.Sent, again.MemberEpoch, sent.MemberEpoch)
		}
	}
	if stale == 0 {
		t.Fatal("no OffsetFetch answered STALE_MEMBER_EPOCH: the case no longer reaches the race")
	}
	ensureMember(t, w)
	if !settle(t, w, 5000) {
		t.Fatal("not settled and caught up after the schedule")
	}
}
