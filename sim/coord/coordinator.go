// Package coord is B1's group coordinator (Kafka's GroupCoordinator and
// GroupMetadataManager) for the world's group id: its group, a classic
// group (classic*.go: JoinGroup/SyncGroup with a client-side leader) or a
// consumer group (consumer*.go: KIP-848's ConsumerGroupHeartbeat with a
// server-side assignor), online migration between them (migration.go),
// and the offsets store both use (offsets.go, Kafka's
// OffsetMetadataManager: commits, fetches, transactional offsets,
// __consumer_offsets). It is handed an env.Env, never the World.
package coord

import (
	"fmt"

	"iter"

	"github.com/kgrepl/kgrepl/sim/env"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/trace"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Config is the broker's group settings, in ticks where Kafka counts
// milliseconds. The World keeps them with the rest of its settings and the
// coordinator reads them as they change.
type Config struct {
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms. 0
	// (kgrepl's default) keeps SPEC §3's rule: JoinGroups that reach an
	// empty group in one tick are answered in one generation.
	InitialRebalanceDelay int
	// The broker's group.consumer.heartbeat.interval.ms and
	// group.consumer.session.timeout.ms. Kafka's defaults are 5 s and
	// 45 s. The interval, 5/45 of a session, is 2 ticks: the smallest
	// interval at which a heartbeat is answered (a 2-tick round trip)
	// before the next is due. The session is 9 ticks, not the classic 6,
	// so that, as with Kafka's defaults, one lost heartbeat does not fence
	// a member: the client waits request.timeout.ms (5) for the answer,
	// then resends after the retry backoff (1 tick), so the coordinator
	// hears the resend interval + request timeout + backoff = 8 ticks
	// after the heartbeat before the lost one; the session must outlast
	// that. Kafka: 5 + 30 + 0.1 s of 45 s; 9 ticks also keeps Kafka's
	// (interval + request timeout) / session = 35/45 = 7/9. With 6 a lost
	// heartbeat always fenced.
	ConsumerHeartbeatInterval int
	ConsumerSessionTimeout    int
	// MigrationPolicy is group.consumer.migration.policy: disabled,
	// upgrade, downgrade or bidirectional (Kafka's default).
	MigrationPolicy string
	// ConsumerMaxSize and ClassicMaxSize are group.consumer.max.size and
	// group.max.size: the most members a consumer group admits
	// (throwIfConsumerGroupIsFull), and the most a classic group may have
	// for a consumer group to be converted back to one (the online
	// downgrade's size check). Kafka's defaults: Integer.MAX_VALUE.
	ConsumerMaxSize, ClassicMaxSize int
}

// Mutations lists the deliberate bugs a test can switch on, to prove that
// a checker (the invariants, the explorer) catches them.
type Mutations struct {
	// CommitOffsetsBeforeMarker makes TxnOffsetCommit commit the offsets
	// at once instead of leaving them pending until the COMMIT marker: a
	// crash before the marker then loses the batch.
	CommitOffsetsBeforeMarker bool
}

// Processes is what the coordinator may learn of a member's process beyond
// its requests. kgrepl's classic heartbeats are implicit (the seed's
// simplification: a live member is heard every tick), so at the places
// Kafka's coordinator would have received or missed a heartbeat it asks
// instead; the World answers (sim/heartbeat.go), and nothing else crosses
// from the clients to the coordinator but packets.
type Processes interface {
	// Alive: client's process inc runs.
	Alive(client string, inc int) bool
	// GoesBy: it runs and goes by memberID.
	GoesBy(client string, inc int, memberID string) bool
	// InGroupAs: it runs, goes by memberID and is not out of the group
	// (a static member past max.poll.interval.ms keeps its id, but its
	// heartbeat thread stopped).
	InGroupAs(client string, inc int, memberID string) bool
	// Heartbeating: it runs, goes by memberID and its classic heartbeat
	// thread sends heartbeats (AbstractCoordinator.HeartbeatThread: in
	// COMPLETING_REBALANCE or STABLE).
	Heartbeating(client string, inc int, memberID string) bool
	// NextHeartbeat is the tick the next heartbeat of client's process inc
	// reaches the coordinator after tick from (a heartbeat sent at s
	// arrives at s+1), when it sends one every heartbeat.interval.ms;
	// ok is false for the implicit heartbeat (heard every tick).
	NextHeartbeat(client string, inc int, from int) (at int, ok bool)
	// LastHeartbeat is the tick its last heartbeat reached the
	// coordinator, at or before now (the tick its heartbeat thread was
	// enabled when it sent none since); ok as NextHeartbeat's.
	LastHeartbeat(client string, inc int, now int) (at int, ok bool)
}

// Coordinator is B1's group coordinator for one group id: the group id's
// current group (GroupMetadataManager's groups map, for one id), the
// offsets store, and what outlives any one group.
type Coordinator struct {
	id      string
	group   Group
	Offsets Offsets
	// Transitions lists every state change of the group id's groups, for
	// the invariant checks.
	Transitions store.Seq[GroupTransition]
	// RebalanceStarts counts the rebalances: a classic group's entries into
	// PreparingRebalance, a consumer group's group epoch bumps.
	RebalanceStarts int
	// Incarnation counts how many times the group id's empty group was
	// deleted and made anew with the other type (recreate): each new group
	// starts at generation and epoch 0, so those numbers only grow within
	// one incarnation.
	Incarnation int
	timerSeq    int // numbers the member timers (groupBase.nextTimer)

	env       *env.Env
	cfg       *Config
	mutations *Mutations
	procs     Processes
}

// New is the group coordinator of group id with an empty classic group: a
// world's group before any member joins. It is handed the world's
// environment, the broker's group settings (read as they change), the
// deliberate bugs a test may switch on, and what it may learn of the
// members' processes.
func New(id string, e *env.Env, cfg *Config, mutations *Mutations, procs Processes) *Coordinator {
	c := &Coordinator{id: id, env: e, cfg: cfg, mutations: mutations, procs: procs}
	c.group = newClassicGroup(c.newBase())
	c.Offsets = newOffsets(id, e, mutations)
	return c
}

// newBase is what a new group of the group id starts with.
func (c *Coordinator) newBase() groupBase {
	return groupBase{c: c, env: c.env, cfg: c.cfg, procs: c.procs, state: Empty}
}

// ID is the group id.
func (c *Coordinator) ID() string { return c.id }

// Type is the group's type: classic or consumer.
func (c *Coordinator) Type() GroupType { return c.group.Type() }

// State is the group's state.
func (c *Coordinator) State() GroupState { return c.group.State() }

// Epoch is the group's generation (classic) or group epoch (consumer).
func (c *Coordinator) Epoch() int { return c.group.Epoch() }

// Describe is the group as the admin client's describe shows it.
func (c *Coordinator) Describe() Description { return c.group.Describe() }

// AllMembers yields the group's members as Describe shows them, in
// member-id order, without making the list (the engine asks every tick).
func (c *Coordinator) AllMembers() iter.Seq[DescribedMember] { return c.group.described }

// Members lists the group's members in member-id order.
func (c *Coordinator) Members() []DescribedMember { return c.group.Describe().Members }

// MemberByID is the member with member id id, or nil: described alone,
// not the whole group.
func (c *Coordinator) MemberByID(id string) *DescribedMember {
	if !c.group.hasMember(id) {
		return nil
	}
	for m := range c.group.described {
		if m.MemberID == id {
			return &m
		}
	}
	return nil
}

// HasMember reports whether the group has a member with member id id
// (a lookup: the charts ask it of every process every tick).
func (c *Coordinator) HasMember(id string) bool { return c.group.hasMember(id) }

// Receive handles a group request (JoinGroup, SyncGroup, LeaveGroup,
// OffsetCommit, OffsetFetch, ConsumerGroupHeartbeat), as
// GroupMetadataManager does: by the kind of the group it names.
func (c *Coordinator) Receive(p *wire.Packet) {
	switch p.Type {
	case wire.JoinGroup:
		c.join(p, p.Body.(*wire.JoinGroupRequest))
	case wire.SyncGroup:
		r := p.Body.(*wire.SyncGroupRequest)
		switch g := c.group.(type) {
		case *ClassicGroup:
			g.onSync(p, r)
		case *ConsumerGroup:
			g.classic().sync(p, r)
		}
	case wire.LeaveGroup:
		r := p.Body.(*wire.LeaveGroupRequest)
		switch g := c.group.(type) {
		case *ClassicGroup:
			g.onLeave(p, r)
		case *ConsumerGroup:
			g.classic().leave(p, r)
		}
	case wire.OffsetCommit:
		c.Offsets.commit(p, p.Body.(*wire.OffsetCommitRequest), c.group)
	case wire.OffsetFetch:
		c.Offsets.fetch(p, p.Body.(*wire.OffsetFetchRequest), c.group)
	case wire.ConsumerGroupHeartbeat:
		c.consumerHeartbeat(p, p.Body.(*wire.ConsumerGroupHeartbeatRequest))
	}
}

// join is GroupMetadataManager.classicGroupJoin: a classic member joins a
// consumer group as a classic member (classicGroupJoinToConsumerGroup),
// unless the consumer group is empty: then it is made anew as a classic
// group, which the member joins.
func (c *Coordinator) join(p *wire.Packet, r *wire.JoinGroupRequest) {
	if g, ok := c.group.(*ConsumerGroup); ok {
		if g.members.len() > 0 {
			g.classic().join(p, r)
			return
		}
		c.becomeClassicGroup()
	}
	c.group.(*ClassicGroup).onJoin(p, r)
}

// consumerHeartbeat is GroupMetadataManager.consumerGroupHeartbeat's
// getOrMaybeCreateConsumerGroup: only a join (epoch 0) creates or
// converts; an empty classic group is replaced by a consumer group, a
// non-empty one converted if group.consumer.migration.policy allows
// upgrades (validateOnlineUpgrade), else GROUP_ID_NOT_FOUND.
func (c *Coordinator) consumerHeartbeat(p *wire.Packet, r *wire.ConsumerGroupHeartbeatRequest) {
	var classic *ClassicGroup // the classic group this heartbeat converts
	if g, ok := c.group.(*ClassicGroup); ok {
		switch {
		case r.MemberEpoch != 0:
			c.env.Reply(p, wire.GroupIDNotFound, "group "+c.id+" is not a consumer group", nil)
			return
		case g.members.len() == 0:
			c.becomeConsumerGroup()
		case !c.upgradeEnabled():
			c.env.Reply(p, wire.GroupIDNotFound, "group "+c.id+" is a classic group and online upgrade is disabled", nil)
			return
		case g.members.len() > c.cfg.ConsumerMaxSize:
			c.env.Reply(p, wire.GroupIDNotFound, fmt.Sprintf("group %s is a classic group of %d members, more than group.consumer.max.size %d",
				c.id, g.members.len(), c.cfg.ConsumerMaxSize), nil)
			return
		default:
			// convertToConsumerGroup builds the consumer group as records;
			// the group becomes it only when the heartbeat succeeds and
			// its records are written. kgrepl converts at once and goes
			// back if the heartbeat fails.
			classic = g
			c.group = fromClassicGroup(g)
		}
	}
	if !c.group.(*ConsumerGroup).onHeartbeat(p, r, classic != nil) && classic != nil {
		c.group = classic
		c.env.Trace().Eventf(trace.EvGroupState, "", "group %s stays a classic group: the heartbeat that converted it failed, so the conversion is discarded (the JoinGroups and SyncGroups it answered REBALANCE_IN_PROGRESS stay answered)", c.id)
	}
}

// ReceiveTxnOffsetCommit stores a transaction's offsets as pending, after
// KIP-447's group fence (the producer-epoch fence is the transaction
// coordinator's, before: the World routes it there first).
func (c *Coordinator) ReceiveTxnOffsetCommit(p *wire.Packet) { c.Offsets.txnCommit(p, c.group) }

// CompleteTxnOffsets is the marker in __consumer_offsets: pending offsets
// of pid become committed (COMMIT) or are dropped (ABORT).
func (c *Coordinator) CompleteTxnOffsets(pid int64, commit bool) { c.Offsets.completeTxn(pid, commit) }

// Tick ends the coordinator's part of a tick: a classic join round whose
// members have all joined completes here, so JoinGroups that arrive in one
// tick are answered in one generation; the consumer group's classic
// members are heard or fall silent.
func (c *Coordinator) Tick() { c.group.tick() }

// HeartbeatStopped: the process going by member id id stopped sending
// classic heartbeats (sim/heartbeat.go): silent from now. Classic groups
// only: a classic member inside a consumer group keeps kgrepl's older rule
// (heard while its process goes by the id).
func (c *Coordinator) HeartbeatStopped(id string) {
	if g, ok := c.group.(*ClassicGroup); ok {
		g.memberIDDropped(id)
	}
}

// HeartbeatStarted: the process going by member id id sends classic
// heartbeats again.
func (c *Coordinator) HeartbeatStarted(id string) {
	switch g := c.group.(type) {
	case *ClassicGroup:
		g.heartbeatStarted(id)
	case *ConsumerGroup:
		// A classic member inside a consumer group: its first heartbeat
		// is answered REBALANCE_IN_PROGRESS if it must rejoin, which
		// starts its join timer.
		g.classic().notify()
	}
}

// MemberIDDropped: a live process goes by another member id now; the one
// it dropped is heard no more.
func (c *Coordinator) MemberIDDropped(id string) {
	switch g := c.group.(type) {
	case *ClassicGroup:
		g.memberIDDropped(id)
	case *ConsumerGroup:
		g.classic().memberIDDropped(id)
	}
}

// ProcessStopped is the implicit heartbeat thread of client's process inc
// going quiet (it crashed, closed or stopped): the coordinator last heard
// it now and removes it after the session timeout. The member is found by
// its process, not by the member id the process knows: one that died with
// its JoinGroup unanswered never learned its id.
func (c *Coordinator) ProcessStopped(client string, inc int) {
	switch g := c.group.(type) {
	case *ClassicGroup:
		g.processStopped(client, inc)
	case *ConsumerGroup:
		g.classic().processStopped(client, inc)
	}
}

// ReplaceProtocols gives every classic member the assignor list its
// client is now configured with (listOf: client id to list; nil keeps the
// member's): the page's shortcut for `set partition.assignment.strategy`
// for the whole world, which changes every member at once, as if each had
// rejoined with its new list. Kafka has no such step; per member, a list
// changes only with a new process (SPEC §4a).
func (c *Coordinator) ReplaceProtocols(listOf func(client string) []string) {
	set := func(md *ClassicMemberMetadata, client string, strategy *string) {
		if l := listOf(client); len(l) > 0 {
			md.Protocols, *strategy = l, l[0]
		}
	}
	switch g := c.group.(type) {
	case *ClassicGroup:
		for _, gm := range g.members.list() {
			set(&gm.ClassicMemberMetadata, gm.ClientID, &gm.Strategy)
		}
		g.protoVer++ // lists replaced in place: supportsProtocols walks again
	case *ConsumerGroup:
		for _, gm := range g.members.list() {
			if gm.classic != nil {
				set(&gm.classic.ClassicMemberMetadata, gm.ClientID, &gm.Strategy)
			}
		}
	}
}

// Settled reports whether a consumer group's members have all reached
// their target, acknowledged it, with nothing left to revoke or be
// released (a classic group: true).
func (c *Coordinator) Settled() bool {
	g, ok := c.group.(*ConsumerGroup)
	return !ok || g.settled()
}

// CheckCounts reports whether the counts the group keeps as it changes
// (the classic members of a consumer group) are what a walk over its
// members finds.
func (c *Coordinator) CheckCounts() error {
	if g, ok := c.group.(*ConsumerGroup); ok {
		return g.checkCounts()
	}
	return nil
}

// Bufs is where a world's copies, made one after another in the storage
// of the one before (sim.Reuser), keep the group's member records.
type Bufs struct {
	classic  []ClassicMember
	consumer []ConsumerMember
}

// Clone is a copy of c for a world whose environment, settings and
// processes are the copy's, made in dst (a finished copy's coordinator)
// when given, its member records in bufs; re gives the copy of a packet on
// the wire (a JoinGroup or SyncGroup the coordinator holds).
func (c *Coordinator) Clone(re func(*wire.Packet) *wire.Packet, e *env.Env, cfg *Config, mutations *Mutations, procs Processes, dst *Coordinator, bufs *Bufs) *Coordinator {
	var old Group
	if dst == nil {
		dst = new(Coordinator)
	} else {
		old = dst.group
	}
	n := dst
	*n = *c
	n.env, n.cfg, n.mutations, n.procs = e, cfg, mutations, procs
	b := groupBase{c: n, env: e, cfg: cfg, procs: procs}
	switch g := c.group.(type) {
	case *ClassicGroup:
		b.state, b.static, b.fenced = g.state, store.CopyLazy(g.static), store.CopyLazy(g.fenced)
		reuse, _ := old.(*ClassicGroup)
		n.group = g.clone(b, reuse, re, bufs)
	case *ConsumerGroup:
		b.state, b.static, b.fenced = g.state, store.CopyLazy(g.static), store.CopyLazy(g.fenced)
		reuse, _ := old.(*ConsumerGroup)
		n.group = g.clone(b, reuse, bufs)
	}
	n.Offsets = c.Offsets.clone(e, mutations)
	n.Transitions = c.Transitions.Clone()
	return n
}

// The group coordinator's timers (wire.OwnerGroupCoordinator).
const (
	tmRebalanceDeadline        uint8 = iota // the join round that began at Key ends
	tmSessionExpiry                         // Member silent since Key
	tmInitialRebalance                      // the initial join round that began at Key: its delay of Arg ticks is over
	tmHeartbeatCheck                        // Member answered in generation Key: heard with it since?
	tmPendingSync                           // generation Key of the group's incarnation Arg: members that sent no SyncGroup are removed
	tmConsumerSessionTimeout                // consumer group Member: session timer number Key
	tmConsumerRebalanceTimeout              // consumer group Member: rebalance timer number Key, at member epoch Arg
	tmClassicJoinTimeout                    // consumer group classic Member: join timer number Key (told to rejoin)
	tmClassicSyncTimeout                    // consumer group classic Member: sync timer number Key (JoinGroup answered)
	tmHeartbeatAnswer                       // classic Member's (process Client, Inc) heartbeat arrives: answer Arg (beatRebalance: of round Key; beatUnknown)
)

// Fire is one of the coordinator's timers firing: the group id's current
// group handles it if it is one of its kind's (a timer of a group since
// converted or made anew finds nothing to do).
func (c *Coordinator) Fire(t wire.Timer) {
	switch g := c.group.(type) {
	case *ClassicGroup:
		g.fire(t)
	case *ConsumerGroup:
		g.fire(t)
	}
}

func (g *ClassicGroup) fire(t wire.Timer) {
	switch t.Kind {
	case tmRebalanceDeadline:
		if g.state == PreparingRebalance && g.roundStart == t.Key {
			g.completeJoin()
		}
	case tmSessionExpiry:
		g.sessionExpiry(t.Member, t.Key)
	case tmInitialRebalance:
		g.initialDelayOver(t.Key, t.Arg)
	case tmHeartbeatCheck:
		g.heartbeatCheck(t.Member, t.Key)
	case tmPendingSync:
		g.expirePendingSync(t.Key, t.Arg)
	case tmHeartbeatAnswer:
		g.heartbeatArrives(t)
	}
}

func (g *ConsumerGroup) fire(t wire.Timer) {
	switch t.Kind {
	case tmHeartbeatCheck:
		g.classic().heartbeatCheck(t.Member)
	case tmConsumerSessionTimeout:
		g.sessionTimeout(t.Member, t.Key)
	case tmConsumerRebalanceTimeout:
		g.rebalanceTimeout(t.Member, t.Key, t.Arg)
	case tmClassicJoinTimeout, tmClassicSyncTimeout:
		g.classic().timeout(t.Member, t.Key, t.Kind == tmClassicSyncTimeout)
	}
}
