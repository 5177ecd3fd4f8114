package kernel

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

var long = flag.Bool("long", false, "run the session property test over many more commands")

// threeViews are the views SPEC §9 promises byte for byte.
func threeViews(t *testing.T, s *Session) string {
	t.Helper()
	out, err := s.Exec("describe group --json; metrics --json; trace --json")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// worldViews shows a world that belongs to no session.
func worldViews(t *testing.T, w *sim.World) string {
	t.Helper()
	return threeViews(t, &Session{branches: map[string]*branch{}, cur: &branch{name: "probe", world: w}, interrupt: new(stopFlag)})
}

// sessionState renders everything a command could change: the branches,
// the one in use, its world's views and its history.
func sessionSnapshot(t *testing.T, s *Session) string {
	t.Helper()
	var b strings.Builder
	for _, n := range s.branchNames() {
		br := s.branches[n]
		fmt.Fprintf(&b, "%s tick %d frozen %v\n%s\n", n, br.world.Tick, br.frozen, strings.TrimSuffix(scriptText(br.scriptLines(false)), "\n"))
	}
	return b.String() + "on " + s.Branch() + "\n" + threeViews(t, s) + "\n" + strings.Join(s.cur.world.Cfg.SetLines(), "\n")
}

// randomCommand draws one command of the property test; some are meant to fail.
// randomSession is a new session for a property test of random commands
// (randomCommand): its own folder with the import fixtures, checkpoints
// every checkpointEvery ticks, and the seed's random source.
func randomSession(t *testing.T, seed int64, checkpointEvery int) (*Session, *rand.Rand) {
	s := NewSession()
	s.Dir = t.TempDir()
	copyImportFixtures(t, s.Dir)
	s.CheckpointEvery = checkpointEvery
	return s, rand.New(rand.NewSource(seed))
}

func randomCommand(rng *rand.Rand, s *Session) string {
	clients := []string{"C1", "C2", "C3"}
	c := clients[rng.Intn(len(clients))]
	switch rng.Intn(20) {
	case 0, 1:
		return "join " + c
	case 2:
		return "crash " + c + []string{"", " now", " after 1"}[rng.Intn(3)]
	case 3:
		return "slow " + c
	case 4:
		return "set " + []string{"commit after", "commit before", "partition.assignment.strategy cooperative-sticky",
			"max.poll.records 1", "session.timeout.ms 9", "producer transactional", "group.instance.id per-member",
			"--from orders-app.properties", "--from orders-app.properties --client " + c, "--from java-producer-transactional.properties"}[rng.Intn(10)]
	case 5:
		return "set " + c + "." + []string{"max.poll.records 1", "enable.auto.commit true", "commit.mode before",
			"enable.auto.commit false", "session.timeout.ms 4"}[rng.Intn(5)]
	case 6, 7, 8:
		return fmt.Sprintf("step %d", 1+rng.Intn(15))
	case 9:
		if rng.Intn(3) == 0 {
			return "run until stable"
		}
		return fmt.Sprintf("run until tick %d", s.World().Tick+rng.Intn(20))
	case 10:
		return fmt.Sprintf("back %d", rng.Intn(12))
	case 11:
		return "fork b" + fmt.Sprint(rng.Intn(4))
	case 12:
		return "switch " + []string{"main", "b0", "b1", "b2", "b3"}[rng.Intn(5)]
	case 13:
		return "save f" + fmt.Sprint(rng.Intn(2)) + ".kg"
	case 14:
		return "load f" + fmt.Sprint(rng.Intn(2)) + ".kg"
	case 15:
		switch rng.Intn(8) {
		case 0, 1:
			return "new --members 2"
		case 2, 4:
			// A group as kafka-consumer-groups.sh showed it (the session's
			// folder holds the fixtures), and one whose file is refused.
			return []string{"new --from-describe kafka37-static-pods.txt", "new --from-describe kafka40-consumer-stable.txt --output o:1 --static",
				"new --from-describe kafka37-members.txt"}[rng.Intn(3)]
		case 3:
			return "new --members 3 --keep-settings"
		case 5:
			// A world that keeps a window of its past: back, save and load
			// and a replay from scratch must give back the same window.
			return fmt.Sprintf("set history.ms %d; new --members 3 --keep-settings; produce --rate 1/2ticks o0 p1", 4+rng.Intn(20))
		}
		return "new" + []string{"", " --keep-settings"}[rng.Intn(2)]
	case 16:
		if rng.Intn(5) == 0 {
			return fmt.Sprintf("demo %d", 1+rng.Intn(12))
		}
		return "restart " + c + []string{"", " --graceful", " --graceful", " --kill"}[rng.Intn(4)]
	case 17:
		if rng.Intn(3) == 0 {
			return []string{"roll all --every 2", "roll C1..C2 --wait-stable", "roll C2,C1 --kill --every 3", "run until closed " + c, "run until left " + c}[rng.Intn(5)]
		}
		return "close " + c
	case 18:
		return "run until processed o0.0 by C9" // always fails
	}
	return "join C1 --static"
}

// TestSessionProperty runs random command sequences. After every command
// the branch's state equals its save/load round trip, `step 1; back 1`,
// and a replay of its history from the origin with no checkpoint, byte for
// byte; a command that fails changes nothing at all.
func TestSessionProperty(t *testing.T) {
	seeds, cmds := 4, 60
	if *long {
		seeds, cmds = 40, 300
	}
	fromFiles := 0 // commands that read a file and succeeded
	defer func() {
		if fromFiles == 0 && !t.Failed() {
			t.Error("no command read a file: the property test does not reach new --from-describe and set --from")
		}
	}()
	for seed := 0; seed < seeds; seed++ {
		s, rng := randomSession(t, int64(seed), 5+seed%7)
		var typed []string
		for i := 0; i < cmds; i++ {
			cmd := randomCommand(rng, s)
			typed = append(typed, cmd)
			before := sessionSnapshot(t, s)
			_, err := s.Exec(cmd)
			if err != nil {
				if strings.Contains(err.Error(), "internal error") {
					t.Fatalf("seed %d: %s: %v", seed, strings.Join(typed, "; "), err)
				}
				if after := sessionSnapshot(t, s); after != before {
					t.Fatalf("seed %d: the failed command %q changed the session (%v)\nafter %s", seed, cmd, err, strings.Join(typed, "; "))
				}
				continue
			}
			if strings.Contains(cmd, " --from") {
				fromFiles++
			}
			checkBranch(t, s, fmt.Sprintf("seed %d after %s", seed, strings.Join(typed, "; ")))
		}
	}
}

func checkBranch(t *testing.T, s *Session, where string) {
	t.Helper()
	want := threeViews(t, s)
	// A replay from the origin, no checkpoint used.
	h := s.cur.hist
	h.cps = nil
	w, _, err := s.replay(h, -1, true)
	if err != nil {
		t.Fatalf("%s: replay: %v", where, err)
	}
	if got := worldViews(t, w); got != want {
		t.Fatalf("%s: a replay of the history from scratch differs", where)
	}
	// save, load into a fresh session.
	file := filepath.Join(s.Dir, "probe.kg")
	if err := os.WriteFile(file, s.cur.sessionFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := s.fresh()
	if _, err := p.Exec("load probe.kg"); err != nil {
		t.Fatalf("%s: load: %v", where, err)
	}
	if got := threeViews(t, p); got != want {
		t.Fatalf("%s: a save/load round trip differs", where)
	}
	// back, from the loaded copy: a tick on, and back.
	if _, err := p.Exec("step 1; back 1"); err != nil {
		t.Fatalf("%s: step 1; back 1: %v", where, err)
	}
	if got := threeViews(t, p); got != want {
		t.Fatalf("%s: step 1; back 1 differs", where)
	}
}

// A per-client set never changes the past, on this branch or another, and
// save writes the settings a branch started from, not later ones.
func TestSettingsAreInputsInTheOrderTyped(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "new\njoin C2\nstep 20")
	live := threeViews(t, s)
	runLines(t, s, "set C2.max.poll.records 1\nstep 10\nback 10")
	if got := threeViews(t, s); got != live {
		t.Error("back 10 after set C2.max.poll.records 1 differs from what was seen at tick 20")
	}
	// A set on main does not show in another branch, before or after back there.
	runLines(t, s, "fork other\nswitch main\nset C2.max.poll.records 2\nset session.timeout.ms 20\nswitch other\nstep 5\nback 5")
	for _, r := range s.World().Cfg.Rows() {
		if r.Key == "C2.max.poll.records" && r.Value != "1" || r.Key == "session.timeout.ms" && r.Value != "6" {
			t.Errorf("branch other sees main's setting %s = %s", r.Key, r.Value)
		}
	}
	// The file's origin has no setting made after new.
	runLines(t, s, "switch main\nsave m.kg")
	data, _ := os.ReadFile(filepath.Join(s.Dir, "m.kg"))
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "set C2.") {
			if i < 3 || !strings.HasPrefix(strings.Join(lines[:i], "\n"), "# kgrepl session v2\n# branch main") || !strings.Contains(strings.Join(lines[:i], "\n"), "\nnew") {
				t.Errorf("save wrote %q before new:\n%s", l, data)
			}
		}
	}
	// Overrides in the order typed: C1 runs commit-before, as show config says.
	runLines(t, s, "new\nset C1.enable.auto.commit true\nset C1.commit.mode before")
	if c := s.World().Member("C1").Cfg.Commit; c != sim.CommitBefore {
		t.Errorf("C1 runs commit %s, want before", c)
	}
	out := runLines(t, s, "show config")
	if !strings.Contains(out, "C1.commit.mode") || !regexpLine(out, `C1\.enable\.auto\.commit\s+false`) {
		t.Errorf("show config:\n%s", out)
	}
	// new resets every setting; --keep-settings keeps them, per-client ones too.
	runLines(t, s, "set commit before\nnew --keep-settings")
	if c := s.World().Member("C1").Cfg.Commit; c != sim.CommitBefore {
		t.Errorf("after new --keep-settings C1 runs commit %s, want before", c)
	}
	runLines(t, s, "new")
	if got, want := s.World().Cfg, sim.DefaultConfig(); len(got.Overrides) != 0 || got.Client != want.Client {
		t.Errorf("plain new kept settings: %+v", got)
	}
}

func regexpLine(text, pattern string) bool {
	for _, l := range strings.Split(text, "\n") {
		if ok, _ := regexpMatch(pattern, l); ok {
			return true
		}
	}
	return false
}

// A demo that fails leaves the user's session as it was; one that
// succeeds replaces it, and prints the same from anywhere.
func TestDemoLeavesTheSessionWhenItFails(t *testing.T) {
	s := NewSession()
	runLines(t, s, "join C2\nstep 7\nfork mine\nstep 2")
	before := sessionSnapshot(t, s)
	s.AfterTick = func(w *sim.World) error {
		if w.Tick == 9 {
			return fmt.Errorf("a check failed at tick 9")
		}
		return nil
	}
	if _, err := s.Exec("demo 11"); err == nil {
		t.Fatal("demo 11 did not fail")
	}
	if sessionSnapshot(t, s) != before {
		t.Error("a failed demo changed the session")
	}
	s.AfterTick = nil
	alone, err := NewSession().Exec("demo 12")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if out, err := s.Exec("demo 12"); err != nil || out != alone {
			t.Fatalf("demo 12 from a session with branches (run %d): %v", i+1, err)
		}
	}
	if _, ok := s.branches["mine"]; ok {
		t.Error("the demo kept the user's branch mine")
	}
}

// A failed command's world is put back even when its checkpoint is far.
func TestFailedRunRollsBackFromACheckpoint(t *testing.T) {
	s := NewSession()
	s.CheckpointEvery = 50
	runLines(t, s, "join C2\nstep 120\ncrash C1 now\ncrash C2 now\nstep 30")
	s.CheckpointEvery = 1 << 30 // none during the failing run: it would only slow the test
	before := sessionSnapshot(t, s)
	// Nobody is left to process it: the run fails after its bound, far past
	// the last checkpoint, and the world is made again from that one.
	if _, err := s.Exec("run until processed o0.9"); err == nil {
		t.Fatal("run until processed o0.9 was met")
	}
	if sessionSnapshot(t, s) != before {
		t.Error("a failed run until processed changed the session")
	}
}

func regexpMatch(pattern, s string) (bool, error) { return regexp.MatchString(pattern, s) }

// Every demo survives save and load, every branch of it, stop events and
// all (demos 4, 7, 9 and 12 did not).
func TestDemosSurviveSaveAndLoad(t *testing.T) {
	for n := 1; n <= len(demoTitles); n++ {
		s := NewSession()
		s.Dir = t.TempDir()
		if _, err := s.Exec(fmt.Sprintf("demo %d", n)); err != nil {
			t.Fatal(err)
		}
		for _, name := range s.branchNames() {
			if _, err := s.Exec("switch " + name); err != nil {
				t.Fatal(err)
			}
			checkBranch(t, s, fmt.Sprintf("demo %d, branch %s", n, name))
		}
	}
}

// A world of Kafka's defaults keeps at most 5 Produce requests of a
// partition in flight (ProducerConfig max.in.flight.requests.per.connection,
// RecordAccumulator's guarantee), and a saved file must carry that: loaded
// with no limit, C1 sent o0.5 behind its unanswered o0.0 where the saved
// world held it (found by a random session script, save and load).
func TestSavedKafkaDefaultsWorldKeepsItsInFlightLimit(t *testing.T) {
	s := checkedSession(t)
	s.Dir = t.TempDir()
	mustExec(t, s, "new --kafka-defaults --members 3; drop Produce response C1; step 9")
	d := reloaded(t, s, "k.kg")
	if got, n := d.World().Cfg.Client.MaxInFlight, s.World().Cfg.Client.MaxInFlight; got != n || n != 5 {
		t.Fatalf("loaded max in flight %d, saved %d, want 5", got, n)
	}
}

// reloaded saves s as file and loads it into a new checked session in the
// same folder, which it returns once its three views are s's (SPEC §9:
// save and load agree byte for byte).
func reloaded(t *testing.T, s *Session, file string) *Session {
	t.Helper()
	want := threeViews(t, s)
	mustExec(t, s, "save "+file)
	d := checkedSession(t)
	d.Dir = s.Dir
	mustExec(t, d, "load "+file)
	if got := threeViews(t, d); got != want {
		t.Fatalf("after save and load:\n%s\nwant:\n%s", got, want)
	}
	return d
}
