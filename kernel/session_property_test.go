package kernel

import (
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// The randomized session tests below (TestSessionMatchesFreshReplay and its
// LongSteps variant) are cheap by default. For a longer run:
//
//	go test ./kernel -run TestSessionMatchesFreshReplay -propseeds 40 -propcmds 200
//	go test ./kernel -run TestSessionMatchesFreshReplay -propmix 2 -propseed0 100
//
// -propseeds N   seeds per test (LongSteps runs N/2+1 of them)
// -propcmds N    random commands per seed
// -propseed0 N   the first seed, to try other sessions
// -propmix M     the command mix: 1 the general one, 2 leans on the consumer
//
//	protocol, custom topologies and static members, 0 (default)
//	mix 1 on even seeds and mix 2 on odd ones
//
// -propcp N      Session.CheckpointEvery for every seed (default -1: varies by seed)
//
// Every seed is fixed: a failure names the seed (rerun it alone with
// -run 'TestSessionMatchesFreshReplay/seed3' and the same flags) and prints
// the commands typed so far, which `kgrepl --keep-going FILE` replays in an
// empty folder (some are meant to fail).
var (
	propSeeds = flag.Int("propseeds", 4, "seeds per randomized session test (see session_property_test.go)")
	propCmds  = flag.Int("propcmds", 50, "random commands per seed")
	propSeed0 = flag.Int("propseed0", 0, "first seed")
	propMix   = flag.Int("propmix", 0, "command mix: 1, 2, or 0 to alternate by seed")
	propCP    = flag.Int("propcp", -1, "Session.CheckpointEvery for every seed (-1: varies by seed)")
)

// typedCmd is one successful world-changing command with the ticks around it.
type typedCmd struct {
	line          string
	before, after int
	time          bool // a step or run, recorded as the ticks it advanced
	isNew         bool
}

// branchModel is what a user typed to make a branch: run in a fresh
// session, its lines make the same branch.
type branchModel []typedCmd

func (m branchModel) clone() branchModel { return append(branchModel(nil), m...) }

func (m branchModel) lines() []string {
	var out []string
	for _, c := range m {
		out = append(out, c.line)
	}
	return out
}

// cut is the model at tick T of the current world (after its last new): the
// commands typed up to T, a step or run that went past T shortened to end there.
func (m branchModel) cut(T int) branchModel {
	start := -1
	for i, c := range m {
		if c.isNew {
			start = i
		}
	}
	out := m[:start+1].clone()
	for _, c := range m[start+1:] {
		if !c.time && c.before <= T || c.time && c.after <= T {
			out = append(out, c)
			continue
		}
		if c.time && c.before < T {
			out = append(out, typedCmd{line: fmt.Sprintf("step %d", T-c.before), before: c.before, after: T, time: true})
		}
		break
	}
	return out
}

// everyView renders all a user can see of the branch in use: every view,
// each log, and the prompt (without the branch's name). A view that fails
// shows its error.
func everyView(s *Session) string {
	var b strings.Builder
	w := s.World()
	out := w.Topo.Output.Name
	vs := []string{"describe group --json", "describe group --members --verbose", "describe group --state", "describe group",
		"metrics --json", "metrics", "trace --json", "trace --events", "offsets", "txn", "consume " + out + " --json",
		"consume " + out + " --isolation read_committed --json", "consume " + out + " --isolation read_uncommitted --json",
		"show config", "members", "show traffic"}
	for _, tp := range append(w.Layout().Inputs(), w.Layout().Outputs()...) {
		vs = append(vs, "log "+tp.String())
	}
	for _, v := range vs {
		out, err := s.Exec(v)
		fmt.Fprintf(&b, "== %s\n%s\nerr=%v\n", v, out, err)
	}
	fmt.Fprintf(&b, "prompt %s\n", strings.TrimPrefix(s.Prompt(), s.Branch()+" "))
	return b.String()
}

// fullSnapshot is everything a command could change: every branch and its
// history, the branches view, and every view of the branch in use.
func fullSnapshot(t *testing.T, s *Session) string {
	t.Helper()
	out, err := s.Exec("branches")
	if err != nil {
		t.Fatal(err)
	}
	return sessionSnapshot(t, s) + "\n" + out + "\n" + everyView(s)
}

var propClients = []string{"C1", "C2", "C3", "C4"}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// propCommand draws one line of the randomized session tests (a few hold
// two commands separated by ';', some are meant to fail). longSteps draws
// steps of hundreds of ticks and never a new.
func propCommand(r *rand.Rand, s *Session, longSteps bool, mix int) string {
	if mix == 2 && r.Intn(3) == 0 {
		return propCommandConsumer(r, s)
	}
	if mix == 3 {
		if r.Intn(2) == 0 {
			return propCommandRealTime(r, s)
		}
		// A new world is Kafka's, in real time, unless it keeps the settings.
		if cmd := propCommand(r, s, longSteps, 1); strings.HasPrefix(cmd, "new") && !strings.Contains(cmd, "--keep-settings") {
			return strings.Replace(cmd, "new", "new --kafka-defaults", 1)
		} else {
			return cmd
		}
	}
	if r.Intn(10) == 0 {
		return propRate(r, "orders-0", "orders-1", "payments-2", "orders", "p1")
	}
	c := pick(r, propClients...)
	switch r.Intn(37) {
	case 34:
		t := s.World().Tick
		return fmt.Sprintf("explore --ticks %d..%d --bound 25 --parallel 1", t, t+2)
	case 35:
		return "compare " + pick(r, "commit after,before", "partition.assignment.strategy range,cooperative-sticky", "group.protocol classic,consumer", "max.poll.records 1,3")
	case 36:
		return pick(r, "plot pause", "plot lag", "diagram", "sequence", "plot timeline", "diagram --ticks 0..3")
	case 0, 1:
		return "join " + c + pick(r, "", "", " --static")
	case 2:
		return "close " + c + pick(r, "", " --now")
	case 3:
		return "crash " + c + pick(r, "", " now", " after 1", " after 3", " after 0")
	case 4:
		return "restart " + c + pick(r, "", "", " --graceful", " --kill")
	case 33:
		// Deploys: engine state that acts at later ticks, which back, fork,
		// save and load must make again from the one line.
		return pick(r, "roll all --every 3", "roll C1..C3 --wait-stable", "roll C2,C1 --kill --every 2", "roll all --kill --every 0",
			"run until closed "+c, "run until left "+c, "close "+c+"; run until stable")
	case 5:
		return "slow " + c
	case 6:
		return "drop " + pick(r, "Produce response "+c, "JoinGroup request", "SyncGroup response", "Heartbeat request "+c,
			"OffsetCommit response", "Fetch response "+c+" 2", "EndTxn response", "ConsumerGroupHeartbeat request "+c, "TxnOffsetCommit request")
	case 7, 8, 9, 10:
		if longSteps && r.Intn(2) == 0 {
			return fmt.Sprintf("step %d", 100+r.Intn(1500))
		}
		return fmt.Sprintf("step %d", 1+r.Intn(25)) + pick(r, "", "", " --quiet")
	case 11:
		return "run until stable" + pick(r, "", " --quiet")
	case 12:
		return fmt.Sprintf("run until tick %d", s.World().Tick+r.Intn(40)-3)
	case 13:
		return "run until processed " + pick(r, "o0.", "p1.", "o2.") + fmt.Sprint(r.Intn(14)) + pick(r, "", " by C2")
	case 14, 15:
		return "set " + pick(r, "commit after", "commit before", "commit auto", "producer plain", "producer idempotent",
			"producer transactional", "sticky.rules kafka", "sticky.rules seed", "group.protocol consumer", "group.protocol classic",
			"partition.assignment.strategy cooperative-sticky", "partition.assignment.strategy sticky",
			"partition.assignment.strategy roundrobin", "partition.assignment.strategy range",
			"isolation.level read_committed", "isolation.level read_uncommitted", "session.timeout.ms 9", "max.poll.records 1",
			"max.poll.interval.ms 20", "group.instance.id gi", "group.remote.assignor range", "transaction.timeout.ms 12",
			"enable.idempotence false", "enable.auto.commit false", "enable.auto.commit true", "group.initial.rebalance.delay.ms 3",
			"group.consumer.heartbeat.interval.ms 3", "group.consumer.session.timeout.ms 12", "group.consumer.migration.policy upgrade",
			"records.per.partition 4", "slow.processing.ticks 5", "processing.ticks 2", "request.timeout.ms 7")
	case 16, 17:
		return "set " + c + "." + pick(r, "group.protocol consumer", "group.protocol classic", "max.poll.records 1", "commit.mode before",
			"commit.mode after", "enable.auto.commit true", "enable.auto.commit false", "session.timeout.ms 4", "group.instance.id s"+c,
			"group.instance.id none", "transactional.id tx-"+c, "transactional.id none", "enable.idempotence false",
			"partition.assignment.strategy cooperative-sticky", "sticky.rules kafka", "group.remote.assignor range",
			"max.poll.interval.ms 5", "processing.ticks 2")
	case 18:
		if longSteps {
			return fmt.Sprintf("produce %s %d", pick(r, "orders-0", "orders-1", "payments-2"), 20+r.Intn(80))
		}
		return fmt.Sprintf("produce %s %d", pick(r, "orders-0", "orders-1", "payments-2"), 1+r.Intn(8))
	case 19, 20:
		return fmt.Sprintf("back %d", pick(r, 0, 1, 2, 5, 13, r.Intn(60), r.Intn(s.World().Tick+1)))
	case 21:
		return "fork b" + fmt.Sprint(r.Intn(5))
	case 22, 23:
		return "switch " + pick(r, "main", "b0", "b1", "b2", "b3", "b4")
	case 24:
		return "save f" + fmt.Sprint(r.Intn(3)) + ".kg"
	case 25:
		return "load f" + fmt.Sprint(r.Intn(3)) + ".kg"
	case 26:
		if longSteps || r.Intn(3) > 0 {
			return "step 1"
		}
		return pick(r, "new", "new --keep-settings", "new --members 2", "new --members 3 --keep-settings", "new --members 0 --keep-settings")
	case 27:
		return "run until polled " + pick(r, "o0.", "p2.") + fmt.Sprint(r.Intn(12))
	case 28:
		return fmt.Sprintf("step %d; back %d", 1+r.Intn(20), r.Intn(5))
	case 29:
		return fmt.Sprintf("back %d", r.Intn(3000))
	case 30:
		return "set bogus.key 1" // fails
	case 31:
		return "close C9" // fails
	case 32:
		return "join " + c + " --topics orders"
	}
	return fmt.Sprintf("step %d", 1+r.Intn(10))
}

// propCommandConsumer is mix 2's share: the consumer protocol, custom
// topologies and static members.
func propCommandConsumer(r *rand.Rand, s *Session) string {
	c := pick(r, propClients...)
	w := s.World()
	ins := w.Layout().Inputs()
	tp := ins[r.Intn(len(ins))].String()
	switch r.Intn(14) {
	case 0:
		return pick(r, "new --topics t:2,u:1 --output out:2 --members 2 --keep-settings", "new --members 0 --keep-settings",
			"new --topics orders:2 --members 3 --keep-settings", "new --topics a:1 --output inv:1 --keep-settings")
	case 1:
		return "set " + c + ".group.protocol " + pick(r, "consumer", "consumer", "classic")
	case 2:
		return "restart " + c + pick(r, "", " --graceful")
	case 3:
		return "join " + c + pick(r, "", " --static", " --topics "+strings.SplitN(tp, "-", 2)[0])
	case 11:
		return pick(r, "roll all --wait-stable", "roll all --every 4", "run until left "+c, "run until closed "+c)
	case 4:
		if r.Intn(3) == 0 {
			return propRate(r, tp, strings.SplitN(tp, "-", 2)[0])
		}
		return fmt.Sprintf("produce %s %d", tp, 1+r.Intn(10))
	case 5:
		return "drop " + pick(r, "ConsumerGroupHeartbeat response", "ConsumerGroupHeartbeat request "+c, "OffsetCommit request "+c,
			"Produce response "+c+" 2", "WriteTxnMarkers request", "AddPartitionsToTxn response", "InitProducerId response")
	case 6:
		return "set " + pick(r, "group.protocol consumer", "group.remote.assignor range", "group.consumer.heartbeat.interval.ms 1",
			"group.consumer.session.timeout.ms 4", "group.consumer.migration.policy "+pick(r, "disabled", "upgrade", "downgrade", "bidirectional"),
			"producer transactional", "isolation.level read_committed", "records.per.partition "+fmt.Sprint(r.Intn(6)), "group.initial.rebalance.delay.ms 4")
	case 7:
		return "set " + c + ".group.instance.id " + pick(r, "g"+c, "none")
	case 8:
		return "run until processed " + w.Layout().Name(ins[r.Intn(len(ins))], r.Intn(6))
	case 9:
		return "crash " + c + pick(r, " now", " after 2")
	case 10:
		return "close " + c + pick(r, "", " --now")
	}
	return fmt.Sprintf("step %d", 1+r.Intn(30))
}

// propRate draws steady production at modest rates on some of inputs,
// its end, or a refused one (a rate of 0, one past the records limit at
// once or within a step).
func propRate(r *rand.Rand, inputs ...string) string {
	in := pick(r, inputs...)
	switch r.Intn(8) {
	case 0:
		return "produce --stop " + in
	case 1:
		// Fails: 10^9 records in a tick is 4 GB in the cost estimate
		// (worldcost.go: 4 B a steady record), past the sessions' budget
		// (propBudget).
		return "produce --rate " + pick(r, "0/tick", "-1/tick", "1/0ticks", "1000000000/tick") + " " + in
	case 2:
		// The step fails on any machine: 3 x 10^9 records in a partition
		// pass 2^31.
		return "produce --rate 3000000/tick " + in + "; step 1000"
	}
	// A rate in time runs in real time (mix 3) and is refused on the page's scale.
	return "produce --rate " + pick(r, "1/tick", "1/3ticks", "2/5ticks", "3/tick", "1/20ticks", "50/s", "7/m") + " " + in
}

// propCommandRealTime is half of mix 3 (the other half is mix 1's, a new
// world there being Kafka's): real time (SPEC §3a). Worlds with
// Kafka's defaults, the clock switched both ways and its tick changed (at
// tick 0, or refused later), durations in milliseconds (some below a
// tick, refused), and steps and runs typed as times.
func propCommandRealTime(r *rand.Rand, s *Session) string {
	w := s.World()
	switch r.Intn(10) {
	case 8:
		// Save and load in real time: the file holds the clock's settings first.
		f := "rt" + fmt.Sprint(r.Intn(2)) + ".kg"
		return pick(r, "save "+f+"; load "+f, "save "+f, "load "+f, "fork rt; save "+f+"; switch main; load "+f)
	case 9:
		return "back " + fmt.Sprint(r.Intn(w.Tick+1))
	case 0:
		return pick(r, "new --kafka-defaults", "new --kafka-defaults --members 0", "new --kafka-defaults --members 3", "new --kafka-defaults --keep-settings")
	case 1:
		return "set " + pick(r, "time ms", "time ticks", "tick.ms 1", "tick.ms 2", "tick.ms 10", "tick.ms 0")
	case 2, 3:
		return "step " + pick(r, "5ms", "250ms", "1s", "3s", "45s", "1.5m", "7ms")
	case 4:
		return fmt.Sprintf("run until time %dms", int(clockOf(w).ms(w.Tick))+r.Intn(20000)-100)
	case 5:
		return "set " + pick(r, "session.timeout.ms 45000", "session.timeout.ms 3000", "session.timeout.ms 9", "max.poll.interval.ms 2000",
			"processing.ms 20", "processing.ms 0.1", "processing.ms 5/3", "group.initial.rebalance.delay.ms 0", "retry.backoff.ms 7", "request.timeout.ms 1000",
			"group.consumer.heartbeat.interval.ms 500", "group.consumer.session.timeout.ms 3000", "slow.processing.ms 2500")
	case 6:
		return "set " + pick(r, propClients...) + "." + pick(r, "processing.ms 50", "session.timeout.ms 6000", "max.poll.interval.ms 400", "processing.ticks 2")
	}
	return "crash " + pick(r, propClients...) + pick(r, " now", " after 2")
}

// sessionModel follows a session: each branch's model and each saved file's.
type sessionModel struct {
	dir     string
	models  map[string]branchModel
	files   map[string]branchModel
	cur     string
	cpFresh int // CheckpointEvery of the fresh sessions that replay a model
}

func newSessionModel(dir string) *sessionModel {
	return &sessionModel{dir: dir, models: map[string]branchModel{"main": nil}, files: map[string]branchModel{}, cur: "main"}
}

// freshFrom runs a model's lines in a new session.
func (a *sessionModel) freshFrom(m branchModel) (*Session, error) {
	p := NewSession()
	p.Dir = a.dir
	p.CheckpointEvery = a.cpFresh
	for _, l := range m.lines() {
		if _, err := p.Exec(l); err != nil {
			return p, fmt.Errorf("fresh replay %q: %v", l, err)
		}
	}
	return p, nil
}

// exec runs one command (no ';') in s and keeps the models up to date.
func (a *sessionModel) exec(s *Session, cmd string) (string, error) {
	words := strings.Fields(cmd)
	before := s.World().Tick
	out, err := s.Exec(cmd)
	if err != nil {
		return out, err
	}
	after := s.World().Tick
	switch words[0] {
	case "new":
		a.models[a.cur] = append(a.models[a.cur], typedCmd{line: cmd, isNew: true, before: before, after: after})
	case "back":
		a.models[a.cur] = a.models[a.cur].cut(after)
	case "fork":
		a.models[words[1]] = a.models[a.cur].clone()
		a.cur = words[1]
	case "switch":
		a.cur = words[1]
	case "save":
		a.files[words[1]] = a.models[a.cur].clone()
	case "load":
		a.models[a.cur] = a.files[words[1]].clone()
	default:
		if c := lookup(words[0]); c != nil && (c.mutates || c.time) {
			a.models[a.cur] = append(a.models[a.cur], typedCmd{line: cmd, before: before, after: after, time: c.time})
		}
	}
	return out, nil
}

// TestSessionMatchesFreshReplay runs random sessions of commands (members
// joining, leaving, crashing, lost packets, steps and runs, settings global
// and per client, produce, fork, switch, back, save, load, new, failing
// commands, explore, compare and pictures) and checks, byte for byte:
//   - a command that fails changes nothing of the session;
//   - now and then, and for every branch at the end, every view of the branch
//     equals that of a fresh session that runs the commands typed to make
//     the branch (cut at the tick each back went to, followed through fork,
//     save and load), and the next ticks print the same in both;
//   - step K; back K gives back the same views;
//   - the whole transcript is the same again at another checkpoint spacing.
func TestSessionMatchesFreshReplay(t *testing.T) {
	ratesRan.Store(0)
	for seed := *propSeed0; seed < *propSeed0+*propSeeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { checkRandomSession(t, seed, *propCmds, false) })
	}
	if ratesRan.Load() == 0 {
		t.Fatal("no produce --rate ran in any session: the sessions do not cover steady production")
	}
	if testing.Verbose() {
		t.Logf("%d produce --rate ran", ratesRan.Load())
	}
}

// propBudget is the heap budget of the random sessions (worldBudget).
const propBudget = 16 << 20

// ratesRan counts the produce --rate commands that succeeded in the
// random sessions.
var ratesRan atomic.Int64

// TestSessionMatchesFreshReplayLongSteps is the same with steps of hundreds
// of ticks, so back and load replay from checkpoints far apart.
func TestSessionMatchesFreshReplayLongSteps(t *testing.T) {
	for seed := *propSeed0; seed < *propSeed0+*propSeeds/2+1; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { checkRandomSession(t, 1000+seed, *propCmds, true) })
	}
}

// TestSessionMatchesFreshReplayRealTime is the same in real time: each
// session starts with new --kafka-defaults, and a third of its commands
// are real time's (propCommandRealTime).
func TestSessionMatchesFreshReplayRealTime(t *testing.T) {
	timedRatesRan.Store(0)
	for seed := *propSeed0; seed < *propSeed0+*propSeeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { checkRandomSessionMix(t, 2000+seed, *propCmds, seed%2 == 1, 3) })
	}
	if timedRatesRan.Load() == 0 {
		t.Fatal("no produce --rate R/s or R/m ran in any real-time session")
	}
}

// timedRatesRan counts the rates in time (R/s, R/m) that succeeded.
var timedRatesRan atomic.Int64

func checkRandomSession(t *testing.T, seed, ncmds int, longSteps bool) {
	mix := *propMix
	if mix == 0 {
		mix = 1 + seed%2
	}
	checkRandomSessionMix(t, seed, ncmds, longSteps, mix)
}

func checkRandomSessionMix(t *testing.T, seed, ncmds int, longSteps bool, mix int) {
	// The sessions run under a budget of their own, not the machine's:
	// steady production's records cost the history next to nothing, but
	// metrics counts each record's deliveries in 4 bytes while it runs, so
	// under a 9 GB budget a session of 10^9-record ticks would make every
	// metrics view a gigabyte array. 16 MB keeps the rates that test the
	// refusals refused and every view small.
	defer func(f func() uint64) { worldBudget = f }(worldBudget)
	worldBudget = func() uint64 { return propBudget }
	r := rand.New(rand.NewSource(int64(seed)))
	a := newSessionModel(t.TempDir())
	s := NewSession()
	s.Dir = a.dir
	cp := []int{0, 3, 7, 16, 50}[seed%5]
	if longSteps {
		cp = []int{0, 97, 250}[seed%3]
	}
	if *propCP >= 0 {
		cp = *propCP
	}
	s.CheckpointEvery = cp
	a.cpFresh = []int{0, 11}[seed%2]
	var typed []string
	var transcript strings.Builder
	do := func(cmd string) (string, error) {
		typed = append(typed, cmd)
		out, err := a.exec(s, cmd)
		if err == nil && strings.HasPrefix(cmd, "produce --rate") {
			ratesRan.Add(1)
			if strings.Contains(cmd, "/s ") || strings.Contains(cmd, "/m ") {
				timedRatesRan.Add(1)
			}
		}
		fmt.Fprintf(&transcript, "> %s\n%s\nerr=%v\n", cmd, out, err)
		return out, err
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d (mix %d, CheckpointEvery %d) after %d commands: %s\n"+
			"the commands typed (kgrepl --keep-going FILE replays them):\n%s",
			seed, mix, cp, len(typed), fmt.Sprintf(format, args...), strings.Join(typed, "\n"))
	}
	realTime := 0
	if mix == 3 {
		if _, err := do("new --kafka-defaults"); err != nil {
			fail("%v", err)
		}
	}
	for i := 0; i < ncmds; i++ {
		if s.World().Cfg.Time == sim.TimeMS {
			realTime++
		}
		for _, cmd := range strings.Split(propCommand(r, s, longSteps, mix), ";") {
			cmd = strings.TrimSpace(cmd)
			before := fullSnapshot(t, s)
			_, err := do(cmd)
			if err == nil {
				continue
			}
			if strings.Contains(err.Error(), "internal error") {
				fail("%s: %v", cmd, err)
			}
			if after := fullSnapshot(t, s); after != before {
				fail("the failed command %q (%v) changed the session: %s", cmd, err, firstLineDiff(after, before))
			}
			break
		}
		if r.Intn(4) != 0 && i != ncmds-1 {
			continue
		}
		got := everyView(s)
		p, err := a.freshFrom(a.models[a.cur])
		if err != nil {
			fail("%v", err)
		}
		if want := everyView(p); got != want {
			fail("branch %s differs from a fresh replay of its typed commands: %s\nthe replayed commands:\n%s",
				a.cur, firstLineDiff(got, want), strings.Join(a.models[a.cur].lines(), "\n"))
		}
		// The next ticks print the same in both; back returns to the same views.
		step := fmt.Sprintf("step %d", 1+r.Intn(12))
		t0 := s.World().Tick
		o1, e1 := do(step)
		o2, e2 := p.Exec(step)
		if o1 != o2 || (e1 == nil) != (e2 == nil) {
			fail("%s printed differently from the fresh replay: %s", step, firstLineDiff(o1, o2))
		}
		if e1 == nil {
			if _, err := do(fmt.Sprintf("back %d", s.World().Tick-t0)); err != nil {
				fail("back: %v", err)
			}
			if again := everyView(s); again != got {
				fail("%s and back differ: %s", step, firstLineDiff(again, got))
			}
		}
	}
	if mix == 3 && realTime < ncmds/3 {
		fail("only %d of %d commands ran in a real-time world", realTime, ncmds)
	}
	transcript.WriteString(everyView(s))
	// Every branch against its fresh replay.
	for _, name := range s.branchNames() {
		if _, err := s.Exec("switch " + name); err != nil {
			fail("switch %s: %v", name, err)
		}
		p, err := a.freshFrom(a.models[name])
		if err != nil {
			fail("%v", err)
		}
		if got, want := everyView(s), everyView(p); got != want {
			fail("at the end, branch %s differs from a fresh replay: %s\nthe replayed commands:\n%s",
				name, firstLineDiff(got, want), strings.Join(a.models[name].lines(), "\n"))
		}
	}
	// The same commands in a new session, with checkpoints spaced otherwise,
	// print the same.
	again := NewSession()
	again.Dir = t.TempDir()
	again.CheckpointEvery = 40
	if cp != 0 {
		again.CheckpointEvery = 0
	}
	var tr strings.Builder
	for _, cmd := range typed {
		out, err := again.Exec(cmd)
		fmt.Fprintf(&tr, "> %s\n%s\nerr=%v\n", cmd, out, err)
	}
	tr.WriteString(everyView(again))
	if got, want := tr.String(), transcript.String(); got != want {
		fail("the same commands printed differently with CheckpointEvery %d: %s", again.CheckpointEvery, firstLineDiff(got, want))
	}
}

// TestDemoBranchesMatchTheirScript: each demo's branches show the same as
// its script typed by hand, and back to a random tick of each equals a
// fresh replay of the script's commands for that branch cut at that tick,
// at two checkpoint spacings.
func TestDemoBranchesMatchTheirScript(t *testing.T) {
	for n := 1; n <= len(demoTitles); n++ {
		r := rand.New(rand.NewSource(int64(n)))
		for _, cp := range []int{0, 5} {
			dir := t.TempDir()
			a, byHand := newSessionModel(dir), NewSession()
			byHand.Dir = dir
			text, _ := DemoScript(n)
			for _, line := range strings.Split(text, "\n") {
				if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				for _, cmd := range splitCommands(line) {
					if _, err := a.exec(byHand, strings.Join(cmd, " ")); err != nil {
						t.Fatalf("demo %d: %s: %v", n, cmd, err)
					}
				}
			}
			s := NewSession()
			s.Dir = dir
			s.CheckpointEvery = cp
			runLines(t, s, fmt.Sprintf("demo %d", n))
			for _, b := range s.branchNames() {
				runLines(t, s, "switch "+b)
				runLines(t, byHand, "switch "+b)
				if got, want := everyView(s), everyView(byHand); got != want {
					t.Errorf("demo %d branch %s differs from its script typed by hand: %s", n, b, firstLineDiff(got, want))
				}
				for k := 0; k < 4 && s.World().Tick > 0; k++ {
					tick := s.World().Tick
					T := r.Intn(tick + 1)
					runLines(t, s, fmt.Sprintf("back %d", tick-T))
					m := a.models[b].cut(T)
					a.models[b] = m
					p, err := a.freshFrom(m)
					if err != nil {
						t.Fatalf("demo %d: %v", n, err)
					}
					if got, want := everyView(s), everyView(p); got != want {
						t.Errorf("demo %d branch %s back to tick %d (CheckpointEvery %d) differs from a fresh replay: %s\nthe replayed commands:\n%s",
							n, b, T, cp, firstLineDiff(got, want), strings.Join(m.lines(), "\n"))
						break
					}
				}
			}
		}
	}
}

// interruptSessions is how many sessions TestInterruptAtAnyTickRollsBack
// runs, alternating the classic and the consumer protocol. The default
// keeps the suite fast; issue 25 asks for 200 clean:
//
//	go test ./kernel -run TestInterruptAtAnyTickRollsBack -interruptsessions 200
var interruptSessions = flag.Int("interruptsessions", 6, "sessions of TestInterruptAtAnyTickRollsBack (see session_property_test.go)")

// TestInterruptAtAnyTickRollsBack presses Ctrl-C at a random point of a
// long command (step, run, back, load, demo, a view, a picture, explore,
// compare) in random sessions under both protocols: at a tick the command
// steps (AfterTick), or at a random one of its looks for Ctrl-C
// (stopRequested), sometimes held down from there on, and sometimes again
// while the command is undone. The command fails as interrupted and the
// session is as it was, every branch and view; now and then save and
// load of the branch agree.
func TestInterruptAtAnyTickRollsBack(t *testing.T) {
	// A run until whose record was read long ago waits its whole bound:
	// a shorter one keeps the sessions quick, and is the same rule.
	defer func(l limit) { limitRunUntil = l }(limitRunUntil)
	limitRunUntil.max = 2000
	for seed := 0; seed < *interruptSessions; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		protocol := []string{"classic", "consumer"}[seed%2]
		s := NewSession()
		s.Dir = t.TempDir()
		s.CheckpointEvery = []int{0, 4, 9, 30}[r.Intn(4)]
		typed := []string{"set group.protocol " + protocol, "new --keep-settings"}
		runLines(t, s, strings.Join(typed, "\n"))
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d (%s, CheckpointEvery %d): %s\nthe commands typed:\n%s", seed, protocol, s.CheckpointEvery,
				fmt.Sprintf(format, args...), strings.Join(typed, "\n"))
		}
		for i := 0; i < 40; i++ {
			cmd := propCommand(r, s, false, 1+seed%2)
			if strings.HasPrefix(cmd, "explore") || strings.HasPrefix(cmd, "compare") {
				continue
			}
			typed = append(typed, cmd)
			s.Exec(cmd)
			if r.Intn(3) != 0 {
				continue
			}
			t0 := s.World().Tick
			long := pick(r, "step 200", "run until stable", "run until tick 400", "load f0.kg", "load f1.kg", "run until processed o0.9",
				"demo 3", "back 30", "step 120 --quiet", "offsets", "trace --events", "consume invoices --json", "metrics",
				"describe group --json", "txn", "log invoices-0", "plot pause", "sequence --mermaid",
				pick(r, "step 50", fmt.Sprintf("explore --ticks %d..%d --bound 30 --parallel 2", t0, t0+1), "compare commit after,before"))
			before := fullSnapshot(t, s)
			// How Ctrl-C comes: at a tick the command steps, or at its
			// k-th look for it; held down from there on or pressed once;
			// and again as the command is undone, or not.
			atTick := r.Intn(3) == 0
			at := t0 + 1 + r.Intn(10)
			k := int64(1 + r.Intn(60))
			hold, again := r.Intn(4) == 0, r.Intn(2) == 0
			var polls atomic.Int64
			var fired atomic.Bool
			firedAt := -1
			if atTick {
				s.AfterTick = func(w *sim.World) error {
					if !fired.Load() && w.Tick >= at {
						fired.Store(true)
						firedAt = w.Tick
						s.Interrupt()
					}
					return nil
				}
			} else {
				s.interrupt.onPoll = func() {
					if n := polls.Add(1); n == k || hold && n > k {
						fired.Store(true)
						s.Interrupt()
					}
				}
			}
			if again {
				s.interrupt.onUndo = s.Interrupt
			}
			_, err, p := execCatching(s, long)
			s.AfterTick, s.interrupt.onPoll, s.interrupt.onUndo = nil, nil, nil
			typed = append(typed, long)
			how := fmt.Sprintf("%q with Ctrl-C at tick %d", long, at)
			if !atTick {
				how = fmt.Sprintf("%q with Ctrl-C at its look %d of %d (held %v, again in the undo %v)", long, k, polls.Load(), hold, again)
			}
			if p != nil {
				fail("%s: panic %v", how, p)
			}
			if err == nil {
				// It ended before the interrupt (back replays without
				// calling AfterTick, and a view has few looks), or on the
				// tick of it (a stop event, or its last tick): Ctrl-C is
				// looked for before each tick, not after.
				if fired.Load() && (!atTick || !strings.HasPrefix(long, "back") && s.World().Tick != firedAt) {
					fail("%s succeeded", how)
				}
				continue
			}
			if fired.Load() && !errors.Is(err, ErrInterrupted) {
				fail("%s: error %v, want interrupted", how, err)
			}
			if after := fullSnapshot(t, s); after != before {
				fail("%s (%v) changed the session: %s", how, err, firstLineDiff(after, before))
			}
			typed = typed[:len(typed)-1]
			if r.Intn(4) == 0 {
				want := threeViews(t, s)
				if _, err := s.Exec("save undo.kg; load undo.kg"); err != nil {
					fail("after %s: save and load: %v", how, err)
				}
				if got := threeViews(t, s); got != want {
					fail("after %s: save and load differ: %s", how, firstLineDiff(got, want))
				}
				typed = append(typed, "save undo.kg", "load undo.kg")
			}
		}
	}
}

// randomSet draws a set, global or per client, of any kind.
func randomSet(r *rand.Rand) string {
	c := pick(r, "C1", "C2", "C3", "C7")
	kv := pick(r, "commit.mode after", "commit.mode before", "commit.mode auto", "enable.auto.commit false", "enable.auto.commit true",
		"transactional.id tx-x", "transactional.id none", "transactional.id t-{client}", "enable.idempotence false", "enable.idempotence true",
		"group.instance.id gi", "group.instance.id none", "group.protocol consumer", "group.protocol classic",
		"partition.assignment.strategy cooperative-sticky", "partition.assignment.strategy roundrobin", "sticky.rules kafka", "sticky.rules seed",
		"max.poll.records 1", "max.poll.records 2", "session.timeout.ms 8", "group.remote.assignor range", "processing.ticks 2")
	switch r.Intn(4) {
	case 0:
		return "set " + c + "." + kv
	case 1:
		return "set " + pick(r, "commit after", "commit before", "commit auto", "producer plain", "producer idempotent", "producer transactional",
			"isolation.level read_committed", "group.consumer.migration.policy disabled", "group.consumer.session.timeout.ms 5",
			"group.initial.rebalance.delay.ms 2", "records.per.partition 5", "records.per.partition 3")
	}
	return "set " + kv
}

// TestSettingsSurviveKeepSettingsAndSaveLoad: random settings, global and
// per client, typed before a new --keep-settings (of the default shape or
// another) and after it, show the same after save and load; and back to
// tick 0 shows what a fresh session running the commands typed before the
// first step shows.
func TestSettingsSurviveKeepSettingsAndSaveLoad(t *testing.T) {
	for seed := 0; seed < 200; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		var script []string
		for i := 0; i < 1+r.Intn(8); i++ {
			script = append(script, randomSet(r))
		}
		script = append(script, pick(r, "new --keep-settings", "new --members 3 --keep-settings", "new --topics a:2,b:1 --members 2 --keep-settings"))
		for i := 0; i < 6; i++ {
			switch r.Intn(4) {
			case 0:
				script = append(script, randomSet(r))
			case 1:
				script = append(script, pick(r, "join C2", "join C3 --static", "restart C1", "crash C2 now", "close C1"))
			default:
				script = append(script, fmt.Sprintf("step %d", 1+r.Intn(20)))
			}
		}
		s := NewSession()
		s.Dir = t.TempDir()
		var ok []string
		for _, l := range script {
			if _, err := s.Exec(l); err == nil {
				ok = append(ok, l)
			}
		}
		where := fmt.Sprintf("seed %d, after\n%s\n", seed, strings.Join(ok, "\n"))
		want := everyView(s)
		if _, err := s.Exec("save x.kg; load x.kg"); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if got := everyView(s); got != want {
			t.Fatalf("%s: save and load differ: %s", where, firstLineDiff(got, want))
		}
		runLines(t, s, fmt.Sprintf("back %d", s.World().Tick))
		p := NewSession()
		for _, l := range ok {
			if strings.HasPrefix(l, "step") {
				break
			}
			runLines(t, p, l)
		}
		if got, want := everyView(s), everyView(p); got != want {
			t.Fatalf("%s: back to tick 0 differs from a fresh session of the commands before the first step: %s", where, firstLineDiff(got, want))
		}
	}
}
