package sim

import (
	"fmt"
	"slices"
	"strings"
)

// Deploys: what the World does for the user as time passes, the way an
// orchestrator does for a real group. A graceful restart closes a process
// (the batch in hand finished and committed, then close(), whose leave is
// the protocol's: a LeaveGroup for a dynamic classic member, none for a
// static one; a leave heartbeat with epoch -1, or -2 for a static member,
// under the consumer protocol), waits until it has stopped, and starts a
// new instance. A rolling deploy restarts each member of a list in turn.
//
// Both are world state, copied with the world, and each is one input
// (`restart Cn --graceful`, `roll ...`) applied at the tick it was given:
// replaying a history, which back, fork, save, load and compare do, makes
// them again with no more than that input, and they act at the same ticks.
// What they do between ticks (at the end of Step) is exactly what the
// user would type there: `roll C1,C2 --kill --every 5` is `restart C1`,
// 5 ticks, `restart C2`.

// deploys is the World's deploys under way and the rolls done. Its
// methods are the deploys' mechanics; the World keeps only the entry
// points (RestartGraceful, Roll, Settled, Pending, Leaving, Rolls), and
// Step calls advance at the end of each tick.
type deploys struct {
	restarts []pendingRestart // graceful restarts waiting for their process to stop
	roll     *rolling         // the rolling deploy under way, nil when none
	rolls    []RollRecord     // every roll begun, in order
}

// pendingRestart: once process inc of client has stopped, start a new one.
type pendingRestart struct {
	client string
	inc    int
}

// RollSpec is a rolling deploy as the user asks for it.
type RollSpec struct {
	Members []string // in the order they restart
	// Every is the least number of ticks from one member's restart to the
	// next one's (0: as soon as the previous member's new process started).
	Every int
	// Graceful restarts each member as RestartGraceful does; otherwise it
	// is killed and started at once (Restart).
	Graceful bool
	// WaitStable holds each next member back until the group is stable
	// again (the condition of `run until stable`).
	WaitStable bool
}

// RollRecord is one rolling deploy: what was asked, how far it got and
// what the group paid for it while it ran.
type RollRecord struct {
	RollSpec
	Began int // the tick it was given at
	// Ended is the tick it finished (every member's new process started
	// and the group stable again); -1 while it is under way.
	Ended     int
	Restarted int // members whose new process has started
	// Rebalances and PausePartitionTicks are what the group counted from
	// Began to Ended (to now, while under way): rebalances begun and the
	// pause meter's partition x ticks.
	Rebalances          int
	PausePartitionTicks int
	rebalances0, pause0 int // the counts at Began
}

// rolling is where a roll under way stands.
type rolling struct {
	rec       int    // its record in deploys.rolls
	next      int    // the member whose turn comes next (an index in Members)
	going     string // the member being restarted now, "" when none
	goingInc  int    // its process that must give way to a new one
	lastBegan int    // the tick the last member's restart began
}

func (d deploys) clone() deploys {
	n := deploys{restarts: slices.Clone(d.restarts), rolls: slices.Clone(d.rolls)}
	if d.roll != nil {
		r := *d.roll
		n.roll = &r
	}
	return n
}

// startInstance starts a new process of client, subscribing to what its
// last one did.
func (w *World) startInstance(client string) *Member {
	old := w.current[client]
	m := w.newProcess(client)
	m.Topics = old.Topics
	w.touch(m)
	m.Start()
	return m
}

// RestartGraceful is a deploy's restart of one member: close (as Close
// does), wait until the process has stopped, then start a new instance
// with the same client id, group.instance.id and transactional.id. The new
// process starts at the end of the tick the old one stopped in (at once,
// when close() needs nothing from the broker).
func (w *World) RestartGraceful(client string) error { return w.deploys.restartGraceful(w, client) }

// Roll begins a rolling deploy. The first member's restart begins at once;
// the others follow as spec says, at the end of the ticks they are due in.
func (w *World) Roll(spec RollSpec) error { return w.deploys.begin(w, spec) }

// Settled is `run until stable`'s condition: the group is settled
// (GroupSettled), no process is closing, and no graceful restart or roll
// is under way. A close leaves the group Stable while the member finishes
// its batch; the group changes only when it has left.
func (w *World) Settled() bool {
	return w.deploys.roll == nil && w.deploys.quietGroup(w)
}

// Pending says what keeps the group from being Settled besides the group
// itself: processes closing, graceful restarts waiting for their process
// to stop, a roll under way. Nil when nothing.
func (w *World) Pending() []string { return w.deploys.pending(w) }

// Leaving reports whether client's process is on its way out: closing,
// or due for a restart by the roll under way. A crash or a fatal error may
// end a process too, but nothing a user asked for.
func (w *World) Leaving(client string) bool { return w.deploys.leaving(w.current[client]) }

// Rolls lists every roll begun, oldest first; the cost of one under way
// is counted to now.
func (w *World) Rolls() []RollRecord { return w.deploys.records(w) }

// MembersOf lists the members the coordinator holds for client (a static
// member away under the consumer protocol included): their member ids, and
// the process (incarnation) each belongs to.
func (w *World) MembersOf(client string) (ids []string, incs []int) {
	for gm := range w.Group.AllMembers() {
		if gm.ClientID == client {
			ids, incs = append(ids, gm.MemberID), append(incs, gm.Inc)
		}
	}
	return ids, incs
}

// The deploys' mechanics: the World's entry points above, and Step's
// advance at the end of each tick, hand them the world they act on.

// restartGraceful is RestartGraceful.
func (d *deploys) restartGraceful(w *World, client string) error {
	m := w.current[client]
	if m == nil {
		return fmt.Errorf("restart %s --graceful: no member %s (members: %s)", client, client, w.running())
	}
	if !m.Alive {
		return fmt.Errorf("restart %s --graceful: %s is not running, so there is nothing to close (restart %s starts a new instance; running: %s)", client, client, client, w.running())
	}
	if d.restartPending(client, m.Inc) {
		return fmt.Errorf("restart %s --graceful: %s is restarting already (it closes, then process %d starts)", client, client, m.Inc+1)
	}
	w.trace.Eventf(EvDeploy, client, "%s closes for a graceful restart: process %d starts once it has closed", client, m.Inc+1)
	d.closeForRestart(w, m)
	d.startClosed(w)
	return nil
}

// closeForRestart closes m (it goes on closing if it is already) and
// starts its next process once it has stopped.
func (d *deploys) closeForRestart(w *World, m *Member) {
	w.touch(m)
	m.Close(false)
	if !d.restartPending(m.Client, m.Inc) {
		d.restarts = append(d.restarts, pendingRestart{client: m.Client, inc: m.Inc})
	}
}

func (d *deploys) restartPending(client string, inc int) bool {
	for _, r := range d.restarts {
		if r.client == client && r.inc == inc {
			return true
		}
	}
	return false
}

// startClosed starts a new process for each graceful restart whose old
// process has stopped. One that another input overtook (a restart, a
// join: the client has a newer process already) is dropped.
func (d *deploys) startClosed(w *World) {
	keep := d.restarts[:0]
	for _, r := range d.restarts {
		m := w.current[r.client]
		switch {
		case m == nil || m.Inc != r.inc:
		case m.Alive:
			keep = append(keep, r)
		default:
			w.trace.Eventf(EvDeploy, r.client, "%s (process %d) has stopped: process %d starts (graceful restart)", r.client, r.inc, r.inc+1)
			w.startInstance(r.client)
		}
	}
	clear(d.restarts[len(keep):])
	d.restarts = keep
}

// begin is Roll.
func (d *deploys) begin(w *World, spec RollSpec) error {
	if r := d.roll; r != nil {
		rec := d.rolls[r.rec]
		return fmt.Errorf("roll: a roll is under way since tick %d (%d of %d members restarted; run until stable waits for it)", rec.Began, rec.Restarted, len(rec.Members))
	}
	if len(spec.Members) == 0 {
		return fmt.Errorf("roll: no members to restart")
	}
	if spec.Every < 0 {
		return fmt.Errorf("roll --every %d: a number of ticks >= 0", spec.Every)
	}
	seen := map[string]bool{}
	for _, c := range spec.Members {
		if seen[c] {
			return fmt.Errorf("roll: %s is listed twice (each member restarts once)", c)
		}
		seen[c] = true
		if _, err := w.live("roll", c); err != nil {
			return err
		}
	}
	spec.Members = slices.Clone(spec.Members)
	d.rolls = append(d.rolls, RollRecord{RollSpec: spec, Began: w.Tick, Ended: -1,
		rebalances0: w.Group.RebalanceStarts, pause0: w.Meter.Total})
	d.roll = &rolling{rec: len(d.rolls) - 1, lastBegan: w.Tick}
	how := "killed and started (kill)"
	if spec.Graceful {
		how = "closed, then started (graceful)"
	}
	pace := ""
	if spec.Every > 0 {
		pace += fmt.Sprintf(", at least %d tick(s) apart", spec.Every)
	}
	if spec.WaitStable {
		pace += ", each once the group is stable again"
	}
	w.trace.Eventf(EvDeploy, "", "roll: %d member(s) to restart in turn, %s%s: %s", len(spec.Members), how, pace, strings.Join(spec.Members, " "))
	d.advanceRoll(w)
	return nil
}

// advance moves the deploys on, at the end of a tick.
func (d *deploys) advance(w *World) {
	if len(d.restarts) > 0 {
		d.startClosed(w)
	}
	if d.roll != nil {
		d.advanceRoll(w)
	}
}

// advanceRoll starts every member's restart that is due now.
func (d *deploys) advanceRoll(w *World) {
	r := d.roll
	rec := &d.rolls[r.rec]
	n := len(rec.Members)
	for {
		if r.going != "" {
			if m := w.current[r.going]; m == nil || m.Inc <= r.goingInc {
				return // its old process is still closing
			}
			rec.Restarted++
			r.going = ""
		}
		if r.next == n {
			// Every member's new process started: done once the group is
			// stable again, so the roll's cost is the whole of it.
			if !d.quietGroup(w) {
				return
			}
			rec.Ended = w.Tick
			rec.Rebalances, rec.PausePartitionTicks = w.Group.RebalanceStarts-rec.rebalances0, w.Meter.Total-rec.pause0
			d.roll = nil
			w.trace.Eventf(EvDeploy, "", "roll done: %d member(s) restarted in %d tick(s); %d rebalance(s), pause meter %d partition x ticks",
				n, rec.Ended-rec.Began, rec.Rebalances, rec.PausePartitionTicks)
			return
		}
		if r.next > 0 && (w.Tick < r.lastBegan+rec.Every || rec.WaitStable && !d.quietGroup(w)) {
			return
		}
		c := rec.Members[r.next]
		r.next++
		r.lastBegan = w.Tick
		m := w.current[c]
		r.going, r.goingInc = c, m.Inc
		switch {
		case !m.Alive:
			w.trace.Eventf(EvDeploy, c, "roll %d/%d: %s is not running: process %d starts", r.next, n, c, m.Inc+1)
			w.startInstance(c)
		case rec.Graceful:
			w.trace.Eventf(EvDeploy, c, "roll %d/%d: %s closes: process %d starts once it has closed", r.next, n, c, m.Inc+1)
			d.closeForRestart(w, m)
			d.startClosed(w)
		default:
			w.trace.Eventf(EvDeploy, c, "roll %d/%d: %s is killed and restarted", r.next, n, c)
			_ = w.Restart(c) // c has a process: Restart cannot fail
		}
	}
}

// quietGroup is the group settled (GroupSettled) with no process closing
// and no graceful restart waiting: what a roll's --wait-stable waits for.
func (d *deploys) quietGroup(w *World) bool {
	return len(d.restarts) == 0 && w.GroupSettled() && len(w.closing()) == 0
}

// pending is Pending.
func (d *deploys) pending(w *World) []string {
	var out []string
	for _, c := range w.closing() {
		if !d.restartPending(c, w.current[c].Inc) {
			out = append(out, c+" is closing")
		}
	}
	for _, r := range d.restarts {
		out = append(out, fmt.Sprintf("%s restarts once process %d has closed", r.client, r.inc))
	}
	if r := d.roll; r != nil {
		rec := d.rolls[r.rec]
		out = append(out, fmt.Sprintf("a roll is under way (%d of %d members restarted)", rec.Restarted, len(rec.Members)))
	}
	return out
}

// leaving is Leaving for a client's newest process m (nil: none).
func (d *deploys) leaving(m *Member) bool {
	if m == nil {
		return false
	}
	if m.Closing() {
		return true
	}
	if r := d.roll; r != nil {
		return slices.Contains(d.rolls[r.rec].Members[r.next:], m.Client)
	}
	return false
}

// records is Rolls.
func (d *deploys) records(w *World) []RollRecord {
	out := slices.Clone(d.rolls)
	for i := range out {
		if out[i].Ended < 0 {
			out[i].Rebalances, out[i].PausePartitionTicks = w.Group.RebalanceStarts-out[i].rebalances0, w.Meter.Total-out[i].pause0
		}
	}
	return out
}
