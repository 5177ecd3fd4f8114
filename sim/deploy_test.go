package sim

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// deployWorld is the default topology with n members, all static
// (group.instance.id = the client id) when static, under protocol.
func deployWorld(t *testing.T, n int, protocol string, static bool) *World {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Client.GroupProtocol = protocol
	for i := 1; i <= n && static; i++ {
		c := "C" + itoa(i)
		if err := cfg.Set(c, "group.instance.id", c); err != nil {
			t.Fatal(err)
		}
	}
	topo := DefaultTopology()
	topo.Members = n
	w, err := New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// untilSettled steps (checking the invariants) until Settled, at most bound ticks.
func untilSettled(t *testing.T, w *World, c *Checker, bound int) {
	t.Helper()
	stepUntil(t, w, c, bound, w.Settled)
}

// fatalErrors lists the errors that stop a member or fence it, as the
// trace shows them: a packet answered with one, an event naming one.
func fatalErrors(w *World) []string {
	var out []string
	for _, p := range w.Packets.Headers(0) {
		if p.Error == UnreleasedInstanceID || p.Error == FencedInstanceID || p.Error == FencedMemberEpoch {
			out = append(out, fmt.Sprintf("t=%d %s to %s: %s", p.Sent, p.Type, p.To, p.Error))
		}
	}
	for _, e := range w.Events.All() {
		if e.Kind == EvFenced {
			out = append(out, fmt.Sprintf("t=%d %s", e.Tick, e.Text))
		}
	}
	return out
}

// A graceful restart of a static member keeps the group alive under both
// protocols: the old process finishes its batch and closes (classic: no
// LeaveGroup; consumer: a leave heartbeat with epoch -2), the new one
// starts after it has stopped and takes the member's place with no fatal
// error. A kill-and-start of the same member under the consumer protocol
// is refused with UNRELEASED_INSTANCE_ID (the old instance still holds the
// instance id): the test could tell the two apart.
func TestRestartGracefulStaticBothProtocols(t *testing.T) {
	for _, protocol := range []string{string(ClassicGroup), string(ConsumerGroup)} {
		t.Run(protocol, func(t *testing.T) {
			w := deployWorld(t, 3, protocol, true)
			c := NewChecker()
			stepChecked(t, w, c, 4) // C2 is mid-batch
			if err := w.RestartGraceful("C2"); err != nil {
				t.Fatal(err)
			}
			if w.Settled() {
				t.Fatalf("Settled right after restart --graceful: %v", w.Pending())
			}
			untilSettled(t, w, c, 200)
			if errs := fatalErrors(w); len(errs) > 0 {
				t.Fatalf("fatal errors: %v", errs)
			}
			m := w.Member("C2")
			if m.Inc != 2 || !m.Alive || len(m.Owned) == 0 {
				t.Fatalf("C2: process %d alive %v owns %v; want process 2 running with partitions", m.Inc, m.Alive, m.Owned)
			}
			var leaves []string
			for _, p := range w.Packets.Headers(0) {
				if p.From == "C2" && p.FromInc == 1 && (p.Type == LeaveGroup || p.Type == ConsumerGroupHeartbeat && strings.Contains(w.Packets.At(p.ID).Summary, "leave")) {
					leaves = append(leaves, w.Packets.At(p.ID).Summary)
				}
			}
			switch protocol {
			case string(ClassicGroup):
				if len(leaves) != 0 {
					t.Errorf("a classic static member sent %v on close; Kafka sends no LeaveGroup", leaves)
				}
			case string(ConsumerGroup):
				if len(leaves) != 1 || !strings.Contains(leaves[0], "epoch -2") {
					t.Errorf("the consumer static member's leave: %v, want one heartbeat with epoch -2", leaves)
				}
			}
			for _, c := range []string{"C1", "C2", "C3"} {
				if m := w.Member(c); !m.Alive {
					t.Errorf("%s is not running", c)
				}
			}
		})
	}
	// The kill: refused under the consumer protocol.
	w := deployWorld(t, 3, string(ConsumerGroup), true)
	c := NewChecker()
	stepChecked(t, w, c, 4)
	if err := w.Restart("C2"); err != nil {
		t.Fatal(err)
	}
	stepChecked(t, w, c, 20)
	if errs := fatalErrors(w); !strings.Contains(strings.Join(errs, "\n"), "UNRELEASED_INSTANCE_ID") {
		t.Errorf("a killed static consumer member's new instance: %v, want UNRELEASED_INSTANCE_ID", errs)
	}
}

// events is the narration without the deploys' own lines.
func eventsWithoutDeploys(w *World) string {
	var b strings.Builder
	for _, e := range w.Events.All() {
		if e.Kind != EvDeploy {
			fmt.Fprintf(&b, "t=%d %s\n", e.Tick, e.Text)
		}
	}
	return b.String()
}

func packetsText(w *World) string {
	var b strings.Builder
	for _, p := range w.Packets.Headers(0) {
		fmt.Fprintf(&b, "%d %d %s>%s %s %v %s\n", p.Sent, p.Delivered, p.From, p.To, p.Type, p.Response, p.Error)
	}
	return b.String()
}

// A roll is the restarts a user would type at the ticks it gives them:
// roll C1,C2,C3 --kill --every 5 is restart C1, 5 ticks, restart C2, 5
// ticks, restart C3; with --graceful, each restart --graceful waits for
// the one before to have started its new process.
func TestRollIsTheRestartsTyped(t *testing.T) {
	for _, graceful := range []bool{false, true} {
		t.Run(fmt.Sprintf("graceful=%v", graceful), func(t *testing.T) {
			rolled := deployWorld(t, 3, string(ClassicGroup), false)
			typed := deployWorld(t, 3, string(ClassicGroup), false)
			if err := rolled.Roll(RollSpec{Members: []string{"C1", "C2", "C3"}, Every: 5, Graceful: graceful}); err != nil {
				t.Fatal(err)
			}
			restart := typed.Restart
			if graceful {
				restart = typed.RestartGraceful
			}
			for i, c := range []string{"C1", "C2", "C3"} {
				if i > 0 {
					// At least 5 ticks, and (graceful) until the one before started its new process.
					prev := []string{"C1", "C2"}[i-1]
					for k := 0; k < 5 || typed.Member(prev).Inc < 2; k++ {
						typed.Step()
					}
				}
				if err := restart(c); err != nil {
					t.Fatal(err)
				}
			}
			for rolled.Tick < typed.Tick+60 {
				rolled.Step()
			}
			for typed.Tick < rolled.Tick {
				typed.Step()
			}
			if a, b := eventsWithoutDeploys(rolled), eventsWithoutDeploys(typed); a != b {
				t.Errorf("the roll's events differ from the restarts typed:\n%s", firstDiff(a, b))
			}
			if a, b := packetsText(rolled), packetsText(typed); a != b {
				t.Errorf("the roll's packets differ from the restarts typed:\n%s", firstDiff(a, b))
			}
			rolls := rolled.Rolls()
			if len(rolls) != 1 || rolls[0].Ended < 0 || rolls[0].Restarted != 3 || rolls[0].Rebalances == 0 {
				t.Errorf("rolls %+v: want one, ended, 3 restarted, its rebalances counted", rolls)
			}
		})
	}
}

// roll --wait-stable: each next member's restart begins at the end of the
// first tick the group is settled again, as `restart Cn --graceful; run
// until stable` typed member after member does; static members under both
// protocols come through it with no fatal error.
func TestRollWaitStable(t *testing.T) {
	for _, protocol := range []string{string(ClassicGroup), string(ConsumerGroup)} {
		t.Run(protocol, func(t *testing.T) {
			rolled := deployWorld(t, 3, protocol, true)
			typed := deployWorld(t, 3, protocol, true)
			c := NewChecker()
			if err := rolled.Roll(RollSpec{Members: []string{"C3", "C1", "C2"}, Graceful: true, WaitStable: true}); err != nil {
				t.Fatal(err)
			}
			untilSettled(t, rolled, c, 500)
			for _, m := range []string{"C3", "C1", "C2"} {
				if err := typed.RestartGraceful(m); err != nil {
					t.Fatal(err)
				}
				for typed.Step(); !typed.Settled(); typed.Step() {
				}
			}
			if rolled.Tick != typed.Tick {
				t.Errorf("the roll settled at tick %d, the restarts typed at %d", rolled.Tick, typed.Tick)
			}
			if a, b := packetsText(rolled)+eventsWithoutDeploys(rolled), packetsText(typed)+eventsWithoutDeploys(typed); a != b {
				t.Errorf("the roll differs from the restarts typed:\n%s", firstDiff(a, b))
			}
			if errs := fatalErrors(rolled); len(errs) > 0 {
				t.Fatalf("fatal errors: %v", errs)
			}
			r := rolled.Rolls()[0]
			if r.Ended != rolled.Tick || r.Restarted != 3 || r.PausePartitionTicks != rolled.Meter.Total {
				t.Errorf("roll %+v: want ended at %d with 3 restarted, the pause meter's %d", r, rolled.Tick, rolled.Meter.Total)
			}
			for _, c := range []string{"C1", "C2", "C3"} {
				if m := rolled.Member(c); !m.Alive || m.Inc != 2 {
					t.Errorf("%s: process %d alive %v, want process 2 running", c, m.Inc, m.Alive)
				}
			}
		})
	}
}

// A copy taken in the middle of a roll goes on exactly as the original.
func TestRollSurvivesClone(t *testing.T) {
	w := deployWorld(t, 4, string(ClassicGroup), false)
	if err := w.Roll(RollSpec{Members: []string{"C1", "C2", "C3", "C4"}, Every: 3, Graceful: true, WaitStable: true}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 15; i++ {
		w.Step()
	}
	n := w.Clone()
	for i := 0; i < 150; i++ {
		w.Step()
		n.Step()
	}
	if a, b := packetsText(w)+eventsWithoutDeploys(w), packetsText(n)+eventsWithoutDeploys(n); a != b {
		t.Errorf("the copy went another way:\n%s", firstDiff(a, b))
	}
	if fmt.Sprint(w.Rolls()) != fmt.Sprint(n.Rolls()) || w.Rolls()[0].Ended < 0 {
		t.Errorf("rolls %+v and the copy's %+v: want equal, ended", w.Rolls(), n.Rolls())
	}
}

// Inputs a roll refuses, leaving the world as it was.
func TestRollRefuses(t *testing.T) {
	w := deployWorld(t, 3, string(ClassicGroup), false)
	for _, tc := range []struct {
		spec RollSpec
		want string
	}{
		{RollSpec{}, "no members"},
		{RollSpec{Members: []string{"C1", "C1"}}, "C1 is listed twice"},
		{RollSpec{Members: []string{"C1", "C7"}}, "no member C7"},
		{RollSpec{Members: []string{"C1"}, Every: -1}, ">= 0"},
	} {
		before := w.Events.Len()
		if err := w.Roll(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Roll(%+v): %v, want %q", tc.spec, err, tc.want)
		}
		if w.Events.Len() != before || len(w.Rolls()) != 0 {
			t.Errorf("Roll(%+v) changed the world", tc.spec)
		}
	}
	if err := w.Roll(RollSpec{Members: []string{"C1", "C2"}, Every: 10, Graceful: true}); err != nil {
		t.Fatal(err)
	}
	if err := w.Roll(RollSpec{Members: []string{"C3"}}); err == nil || !strings.Contains(err.Error(), "a roll is under way") {
		t.Errorf("a second roll: %v, want refused", err)
	}
	if err := w.RestartGraceful("C1"); err == nil || !strings.Contains(err.Error(), "restarting already") {
		t.Errorf("restart --graceful of a member the roll is closing: %v, want refused", err)
	}
}

// deploySchedule adds graceful restarts and rolls to a random schedule, at
// random ticks, in tick order.
func deploySchedule(r *rand.Rand, sched []action, ticks, maxClients int) []action {
	for t := 0; t < ticks; t++ {
		if r.Intn(25) != 0 {
			continue
		}
		c := fmt.Sprintf("C%d", 1+r.Intn(maxClients))
		if r.Intn(2) == 0 {
			sched = append(sched, action{tick: t, do: func(w *World) error { return w.RestartGraceful(c) }, name: "restart --graceful " + c})
			continue
		}
		spec := RollSpec{Every: r.Intn(6), Graceful: r.Intn(3) > 0, WaitStable: r.Intn(2) == 0}
		sched = append(sched, action{tick: t, do: func(w *World) error {
			sp := spec // the running members from c on
			live := w.LiveMembers()
			for i, m := range live {
				if m == c {
					sp.Members = live[i:]
				}
			}
			return w.Roll(sp)
		}, name: fmt.Sprintf("roll from %s %+v", c, spec)})
	}
	sort.SliceStable(sched, func(i, j int) bool { return sched[i].tick < sched[j].tick })
	return sched
}

// Random worlds under both protocols with graceful restarts and rolls
// among the faults: the invariants hold on every tick, a refused deploy
// changes nothing (runSchedule), a copy taken in the middle ends exactly
// as a world never copied, and once the faults stop every deploy finishes
// and the group settles.
func TestPropertyDeploys(t *testing.T) {
	rolls, graceful := 0, 0
	for _, proto := range []GroupType{ClassicGroup, ConsumerGroup} {
		for seed := 1; seed <= 6; seed++ {
			// The property tests' random world (seedWorld), with the
			// assignors and commit modes a deploy is asked about, static
			// joins among the faults, and deploys added to its schedule.
			spec := propertyCase(proto)
			spec.source = 1000
			spec.assignor = cycle(1, "range", "cooperative-sticky", "sticky", "roundrobin")
			spec.commit = cycle(4, CommitAuto, CommitAfter)
			spec.ticks, spec.clients, spec.static = 200, 5, fixed(true)
			sc := seedWorld(t, seed, spec)
			topo, cfg := sc.topo, sc.cfg
			sched := deploySchedule(sc.r, sc.sched, 200, 5)
			t.Run(fmt.Sprintf("%s-seed%d", proto, seed), func(t *testing.T) {
				w, err := New(topo, cfg)
				if err != nil {
					t.Fatal(err)
				}
				ref, _ := New(topo, cfg)
				runSchedule(t, w, sched[:len(sched)/2], sched[len(sched)/2].tick)
				runSchedule(t, ref, sched[:len(sched)/2], sched[len(sched)/2].tick)
				cp := w.Clone()
				runSchedule(t, cp, sched[len(sched)/2:], 200)
				runSchedule(t, ref, sched[len(sched)/2:], 200)
				if a, b := fingerprint(cp), fingerprint(ref); a != b {
					t.Fatalf("the copy ended otherwise:\n%s", firstDiff(a, b))
				}
				ensureMember(t, ref)
				c := NewChecker()
				for i := 0; i < 3000 && !ref.Settled(); i++ {
					stepChecked(t, ref, c, 1)
				}
				if !ref.Settled() {
					t.Fatalf("tick %d: not settled 3000 ticks after the faults: %v (group %s)", ref.Tick, ref.Pending(), ref.Group.State())
				}
				for _, r := range ref.Rolls() {
					if r.Ended < 0 || r.Restarted != len(r.Members) {
						t.Errorf("roll %+v did not finish", r)
					}
				}
				rolls += len(ref.Rolls())
				for _, e := range ref.Events.All() {
					if e.Kind == EvDeploy && strings.Contains(e.Text, "closes for a graceful restart") {
						graceful++
					}
				}
			})
		}
	}
	// The schedules are fixed: they must hold deploys the worlds took.
	if rolls < 5 || graceful < 5 {
		t.Errorf("the random worlds ran %d rolls and %d graceful restarts; want at least 5 of each", rolls, graceful)
	}
}
