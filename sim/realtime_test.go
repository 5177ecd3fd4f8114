package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// stepUntilRemoved runs w until the coordinator removes client's member
// and returns that tick (or fails after limit ticks).
func stepUntilRemoved(t *testing.T, w *World, client string, limit int) int {
	t.Helper()
	seen := w.Events.Len()
	for i := 0; i < limit; i++ {
		w.Step()
		for _, e := range w.Events.Slice(seen, w.Events.Len()) {
			if e.Kind == EvRemoved && e.Member == client {
				return w.Tick
			}
		}
		seen = w.Events.Len()
	}
	t.Fatalf("%s was not removed within %d ticks", client, limit)
	return 0
}

func settleWithin(t *testing.T, w *World, limit int) {
	t.Helper()
	for i := 0; i < limit; i++ {
		if w.GroupSettled() {
			return
		}
		w.Step()
	}
	t.Fatalf("the group did not settle within %d ticks", limit)
}

// crashRemoval joins C2, lets the group settle, crashes C2 and gives the
// ticks from the crash to its removal.
func crashRemoval(t *testing.T, cfg Config, limit int) int {
	t.Helper()
	w, err := New(DefaultTopology(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	settleWithin(t, w, limit)
	if err := w.CrashNow("C2"); err != nil {
		t.Fatal(err)
	}
	at := w.Tick
	return stepUntilRemoved(t, w, "C2", limit) - at
}

// In real time, Kafka's 45 s session timeout is 9,000 ticks of 5 ms: a
// crashed member is removed 9,000 ticks after the crash where the page's
// 6-tick timeout removes it 6 ticks after, each plus the same lapse, with
// the page's implicit heartbeat (heartbeat.interval.ms 0: heard every
// tick; TestClassicHeartbeatInterval has Kafka's 3 s).
func TestRealTimeSessionTimeout(t *testing.T) {
	page := crashRemoval(t, DefaultConfig(), 1000)
	lapse := page - 6
	k := KafkaDefaultConfig()
	if err := k.Set("", "heartbeat.interval.ms", "0"); err != nil {
		t.Fatal(err)
	}
	if got := crashRemoval(t, k, 100_000); got != 45_000/DefaultTickMS+lapse {
		t.Errorf("Kafka's defaults: C2 removed %d ticks after its crash, want 45000 ms / %d ms = 9000 ticks + %d (the page's lapse)", got, DefaultTickMS, lapse)
	}
	// A value that is not a whole number of ticks rounds up: 45,001 ms is 9,001 ticks.
	if err := k.Set("", "session.timeout.ms", "45001"); err != nil {
		t.Fatal(err)
	}
	if got := crashRemoval(t, k, 100_000); got != 9001+lapse {
		t.Errorf("session.timeout.ms 45001: removed after %d ticks, want 9001 + %d", got, lapse)
	}
}

// With Kafka's defaults, members that join an empty group together land in
// one generation, and the group forms after group.initial.rebalance.delay.ms
// twice (3 s, 600 ticks, each): C2 and C3 joined during the first delay,
// which C1's JoinGroup started, so Kafka's
// tryCompleteInitialRebalanceElseSchedule waits once more.
func TestKafkaDefaultsGroupForms(t *testing.T) {
	topo := DefaultTopology()
	topo.Members = 0
	w, err := New(topo, KafkaDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"C1", "C2", "C3"} {
		if err := w.Join(c, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	settleWithin(t, w, 100_000)
	d := w.Group.Describe()
	if d.Generation != 1 || len(d.Members) != 3 || d.State != Stable {
		t.Fatalf("after the delay: generation %d, %d members, %s; want generation 1, 3 members, Stable", d.Generation, len(d.Members), d.State)
	}
	if d := 3000 / DefaultTickMS; w.Tick < 2*d || w.Tick > 2*d+20 {
		t.Errorf("the group formed at tick %d; want just after two 3 s delays (tick %d)", w.Tick, 2*d)
	}
	// Kafka's default list, range,cooperative-sticky: every member sends
	// both, the group votes range, and each member rebalances eagerly.
	if d.Assignor != "range" {
		t.Errorf("the group runs %s; members listing range,cooperative-sticky vote range", d.Assignor)
	}
	for _, gm := range d.Members {
		if !slices.Equal(gm.Protocols, []string{"range", "cooperative-sticky"}) {
			t.Errorf("%s listed %v in its JoinGroup, want [range cooperative-sticky]", gm.MemberID, gm.Protocols)
		}
	}
	if p := w.Member("C1").Cfg.RebalanceProtocol(); p != assign.Eager {
		t.Errorf("a member listing range,cooperative-sticky runs %s, want eager (range is eager-only)", p)
	}
}

// Switching the clock's unit changes how settings read and are typed, not
// what the world does: the same inputs with `time ms` set (at the start,
// and back and forth in the middle) give the same world, tick for tick.
func TestTimeUnitChangesNothingTheWorldDoes(t *testing.T) {
	run := func(switches bool) string {
		w, err := New(DefaultTopology(), DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		set := func(k, v string) {
			if err := w.Set("", k, v); err != nil {
				t.Fatal(err)
			}
		}
		// Processing times that are fractions of a tick, per client too.
		set("processing.ticks", "1/3")
		if err := w.Set("C2", "processing.ticks", "3/2"); err != nil {
			t.Fatal(err)
		}
		set("max.poll.records", "7")
		set("tick.ms", "7") // on the page's scale a tick's length changes nothing
		if switches {
			set("time", "ms")
			for client, want := range map[string]string{"": "7/3", "C2": "10.5"} {
				if v, _ := w.Cfg.Get(client, "processing.ms"); v != want {
					t.Fatalf("%q processing.ms is %s after time ms, want %s (7 ms a tick)", client, v, want)
				}
			}
		}
		if err := w.Join("C2", false, nil); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			w.Step()
		}
		if switches {
			set("session.timeout.ms", "56") // 8 ticks of 7 ms
			set("processing.ms", "0.7")     // a tenth of a tick
			set("time", "ticks")
			set("time", "ms")
			set("time", "ticks")
		} else {
			set("session.timeout.ms", "8")
			set("processing.ticks", "1/10")
		}
		if lines := strings.Join(w.Cfg.SetLines(), "; "); !strings.Contains(lines, "set processing.ticks 1/10") || !strings.Contains(lines, "set C2.processing.ticks 3/2") {
			t.Fatalf("the settings after the switches: %s", lines)
		}
		if err := w.CrashNow("C1"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 40; i++ {
			w.Step()
		}
		return fmt.Sprintf("%s\nsettings %q", fingerprint(w), w.Cfg.SetLines())
	}
	if a, b := run(false), run(true); a != b {
		t.Fatalf("the world differs when only the clock's unit changes:\n%s", firstDiff(a, b))
	}
}

// Refusals: a duration below a tick, a tick longer than a duration, a
// tick finer than a message, tick.ms once a real-time clock runs, and the
// page's processing.ticks in real time. Each leaves the settings as they
// were.
func TestRealTimeRefusals(t *testing.T) {
	w, err := New(DefaultTopology(), KafkaDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ client, key, value, want string }{
		{"", "session.timeout.ms", "3", "3 ms is less than one tick (tick.ms 5)"},
		{"C1", "retry.backoff.ms", "4", "retry.backoff.ms: 4 ms is less than one tick"},
		{"", "processing.ms", "0.0001", `processing.ms: "0.0001" is not a time in milliseconds from 0.001`},
		{"C2", "processing.ms", "1/0", `processing.ms: "1/0" is not a time in milliseconds`},
		{"", "processing.ticks", "1", "this world runs in real time (time ms), where it is processing.ms"},
		{"", "tick.ms", "0", `tick.ms: "0" is not a whole number of milliseconds from 1 to 1000`},
		{"", "tick.ms", "0.5", "a message between a client and a broker takes at least 1 ms"},
		{"", "tick.ms", "200", "a tick of 200 ms is longer than retry.backoff.ms (100 ms): every duration"}, // processing.ms (5 ms) may be below a tick
		{"", "time", "seconds", `time: "seconds" is not ticks or ms`},
		{"", "max.poll.interval.ms", "2147483648", "from 5 to 2147483647"},
	} {
		before := w.Cfg.Clone()
		err := w.Set(c.client, c.key, c.value)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("set %s %s %s: %v; want an error saying %q", c.client, c.key, c.value, err, c.want)
		}
		if w.Cfg.SetLines() == nil || strings.Join(before.SetLines(), ";") != strings.Join(w.Cfg.SetLines(), ";") {
			t.Errorf("set %s %s %s was refused but changed the settings", c.client, c.key, c.value)
		}
	}
	// A tick's length is fixed once the clock runs.
	if err := w.Set("", "tick.ms", "1"); err != nil {
		t.Fatalf("tick.ms at tick 0: %v", err)
	}
	w.Step()
	if err := w.Set("", "tick.ms", "2"); err == nil || !strings.Contains(err.Error(), "the clock is at tick 1") {
		t.Errorf("tick.ms at tick 1: %v; want a refusal naming the tick", err)
	}
	// On the page's scale every .ms setting counts ticks, as before.
	p, _ := New(DefaultTopology(), DefaultConfig())
	if err := p.Set("", "session.timeout.ms", "0"); err == nil || err.Error() != `session.timeout.ms: "0" is not a whole number from 1 to 1000000` {
		t.Errorf("page's scale: %v", err)
	}
}

// Every duration the settings table marks is one the clock converts, and
// the real-time world's engine runs each in ticks.
func TestDurationsAreConverted(t *testing.T) {
	n := 0
	for _, s := range Settings {
		if !s.Duration {
			continue
		}
		n++
		if _, ok := overrideDurations[s.Key]; s.Client && !ok {
			t.Errorf("%s: a client duration setTime and setTickMS do not convert", s.Key)
		}
	}
	if n != len(clientDurationKeys)+len(worldDurationKeys)+len(configDurationKeys) {
		t.Errorf("%d duration settings, %d converted", n, len(clientDurationKeys)+len(worldDurationKeys)+len(configDurationKeys))
	}
	// history.ms: 400 ticks is 2,000 ms at tick.ms 5, and back; -1 and 0
	// (keep everything) stay as they are; the engine's window in ticks.
	h := DefaultConfig()
	if err := h.Set("", "history.ms", "400"); err != nil {
		t.Fatal(err)
	}
	if h.setTime(&h.Client, TimeMS); h.HistoryTicks != 2000 || h.HistoryWindow() != 400 {
		t.Errorf("history.ms 400 ticks in real time: %d ms, a window of %d ticks", h.HistoryTicks, h.HistoryWindow())
	}
	if err := h.Set("", "history.ms", "2001"); err != nil || h.HistoryWindow() != 401 {
		t.Errorf("history.ms 2001 ms: %v, a window of %d ticks (rounded up)", err, h.HistoryWindow())
	}
	if err := h.Set("", "history.ms", "3"); err == nil || !strings.Contains(err.Error(), "less than one tick") {
		t.Errorf("history.ms 3 ms at tick.ms 5: %v", err)
	}
	if err := h.Set("", "history.ms", "-2"); err == nil {
		t.Errorf("history.ms -2 was taken")
	}
	if err := h.Set("", "history.ms", "-1"); err != nil || h.HistoryWindow() != 0 {
		t.Errorf("history.ms -1: %v, a window of %d ticks", err, h.HistoryWindow())
	}
	if h.setTime(&h.Client, TimeTicks); h.HistoryTicks != -1 {
		t.Errorf("history.ms -1 back on the page's scale: %d", h.HistoryTicks)
	}
	k := KafkaDefaultConfig()
	e := k.Engine("C1")
	if e.SessionTimeout != 9000 || e.MaxPollInterval != 60_000 || e.RetryBackoff != 20 || e.ProcessTicks != 1 || e.RequestTimeout != 6000 {
		t.Errorf("the engine runs Kafka's defaults as %+v", e)
	}
	if g := k.EngineCoord(); g.InitialRebalanceDelay != 600 || g.ConsumerHeartbeatInterval != 1000 || g.ConsumerSessionTimeout != 9000 {
		t.Errorf("the coordinator runs Kafka's defaults as %+v", g)
	}
}

// With heartbeat.interval.ms (Kafka's 3,000 ms: 600 ticks), the coordinator
// last heard a crashed member at its last heartbeat, not at the crash:
// crashes at 150-tick steps through two intervals are removed at most 600
// ticks before crash + 9,000 and never after, and the removal ticks move
// in whole intervals (the same last heartbeat for the crashes between two
// heartbeats). The members left learn of the rebalance at their own next
// heartbeat, up to an interval after the removal, not the tick after.
func TestClassicHeartbeatInterval(t *testing.T) {
	const every, session = 600, 9000 // 3,000 ms and 45,000 ms in 5 ms ticks
	base, err := New(DefaultTopology(), KafkaDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := base.Join("C2", false, nil); err != nil {
		t.Fatal(err)
	}
	settleWithin(t, base, 100_000)
	removals := map[int]bool{}
	late := map[int]bool{} // ticks from the removal to C1's revocation
	for d := 0; d < 2*every; d += 150 {
		w := base.Clone()
		for i := 0; i < d; i++ {
			w.Step()
		}
		crash := w.Tick
		if err := w.CrashNow("C2"); err != nil {
			t.Fatal(err)
		}
		removed := stepUntilRemoved(t, w, "C2", 2*session)
		if !(removed <= crash+session && removed > crash+session-every) {
			t.Errorf("crash at %d: removed at %d, want within (%d, %d]: the last heartbeat was less than an interval before the crash", crash, removed, crash+session-every, crash+session)
		}
		removals[removed] = true
		// C1 (range, eager) revokes at the answer to its next heartbeat.
		seen := w.Events.Len()
		for i := 0; i < 2*every && !late[-1]; i++ {
			w.Step()
			for _, e := range w.Events.Slice(seen, w.Events.Len()) {
				if e.Member == "C1" && strings.Contains(e.Text, "revokes") {
					if lag := w.Tick - removed; lag < 2 || lag > every+1 {
						t.Errorf("crash at %d: C1 revoked %d ticks after the removal, want 2..%d (its next heartbeat and the answer's flight)", crash, lag, every+1)
					}
					late[w.Tick-removed] = true
					i = 2 * every
				}
			}
			seen = w.Events.Len()
		}
	}
	var ticks []int
	for r := range removals {
		ticks = append(ticks, r)
	}
	slices.Sort(ticks)
	if len(ticks) < 2 {
		t.Fatalf("removals %v: crashes an interval apart were removed at one tick", ticks)
	}
	for i := 1; i < len(ticks); i++ {
		if (ticks[i]-ticks[0])%every != 0 {
			t.Errorf("removals %v: not whole heartbeat intervals apart", ticks)
		}
	}
	if len(late) < 1 || late[1] {
		t.Errorf("C1's revocations came %v ticks after the removals: the implicit heartbeat's 1", late)
	}
}
