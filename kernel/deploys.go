package kernel

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

// Deploys: restart --graceful, roll, and the run forms that wait for a
// member to close or leave.
//
// A graceful restart and a roll are engine state (sim/deploy.go), not
// steps the kernel drives: each is one world input, recorded as typed at
// the tick it was given, and the engine acts for it at the end of the
// ticks it is due in, as if the user had typed the restarts there. So the
// history stays a list of inputs and steps: back, fork, save, load and
// compare replay a roll with no more than its line; a roll cut by `back`
// or a step's end goes on when the clock does; undoing a failed command
// is the replay it always was; and Ctrl-C in a `run` during a roll stops
// at a tick like any run. A kernel-driven roll would have to record the
// restarts it typed as inputs of their own, and be one command that both
// steps and changes the world, which the history does not hold.

func cmdRestart(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("restart", args, nil, []string{"--graceful", "--kill"})
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usageErr("restart", "want exactly one member (running: %s)", strings.Join(liveClients(s), " "))
	}
	if fl["--graceful"] != "" && fl["--kill"] != "" {
		return nil, usageErr("restart", "--graceful and --kill contradict each other (give one; restart alone is --kill)")
	}
	f := (*sim.World).Restart
	if fl["--graceful"] != "" {
		f = (*sim.World).RestartGraceful
	}
	return memberCmd("restart", f)(s, pos)
}

func cmdRoll(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("roll", args, []string{"--every"}, []string{"--graceful", "--kill", "--wait-stable"})
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		if len(pos) == 0 {
			return nil, usageErr("roll", "which members? (MEMBERS is all, Cn, Cn..Cm, or a comma-separated list of them; running: %s)", strings.Join(liveClients(s), " "))
		}
		return nil, usageErr("roll", "unexpected %q: MEMBERS is one word, e.g. C1..C3,C5 (no spaces)", pos[1])
	}
	if fl["--graceful"] != "" && fl["--kill"] != "" {
		return nil, usageErr("roll", "--graceful and --kill contradict each other (give one; roll alone is --graceful)")
	}
	spec := sim.RollSpec{Graceful: fl["--kill"] == "", WaitStable: fl["--wait-stable"] != ""}
	every, hasEvery := fl["--every"]
	if hasEvery {
		if spec.Every, err = parseDurationTicks(s.World(), "roll", "--every", every); err != nil {
			return nil, err
		}
	}
	if !spec.Graceful && !hasEvery && !spec.WaitStable {
		return nil, usageErr("roll", "--kill with neither --every nor --wait-stable restarts every member in the same tick; "+
			"give --every DURATION (--every 0 for all at once) or --wait-stable")
	}
	if spec.Members, err = parseMembers(s, "roll", pos[0]); err != nil {
		return nil, err
	}
	w := s.World()
	from := w.Events.Len()
	if err := w.Roll(spec); err != nil {
		return nil, err
	}
	s.narrate(w, from)
	return nil, nil
}

// memberItem is one element of a MEMBERS list: Cn, or a range Cn..Cm.
var memberItem = regexp.MustCompile(`^C([1-9][0-9]*)(?:\.\.C([1-9][0-9]*))?$`)

// parseMembers reads a MEMBERS word: all (every running member, in natural
// order), or a comma-separated list of Cn and Cn..Cm, in the order given.
// Whether each is running is the engine's to say (World.Roll).
func parseMembers(s *Session, cmd, word string) ([]string, error) {
	w := s.World()
	if word == "all" {
		live := w.LiveMembers()
		if len(live) == 0 {
			return nil, fmt.Errorf("%s all: no member is running", cmd)
		}
		return natural.Sorted(append([]string(nil), live...)), nil
	}
	bad := func(why string) error {
		return usageErr(cmd, "%q %s (MEMBERS is all, Cn, Cn..Cm, or a comma-separated list of them, e.g. C1..C3,C5)", shortWord(word), why)
	}
	var out []string
	for _, item := range strings.Split(word, ",") {
		m := memberItem.FindStringSubmatch(item)
		if m == nil {
			if item == "" {
				return nil, bad("has an empty element")
			}
			return nil, bad(fmt.Sprintf("has %q, which is no member", shortWord(item)))
		}
		if m[2] == "" {
			out = append(out, item)
			continue
		}
		from, err1 := strconv.Atoi(m[1])
		to, err2 := strconv.Atoi(m[2])
		if err1 != nil || err2 != nil || to < from {
			return nil, bad(fmt.Sprintf("has the range %s, which does not count up", item))
		}
		// Each member named must exist, once: a list naming more than the
		// world's clients cannot, and is refused before it is spelled out.
		if n := len(w.Clients()); len(out)+to-from+1 > n {
			return nil, fmt.Errorf("%s %s: names more members than the world's %d client(s) (running: %s)", cmd, shortWord(word), n, strings.Join(liveClients(s), " "))
		}
		for i := from; i <= to; i++ {
			out = append(out, "C"+strconv.Itoa(i))
		}
	}
	for _, c := range out {
		if !sim.IsClientID(c) {
			return nil, bad(fmt.Sprintf("has %s, which is no client id (C1 to C999999)", c))
		}
	}
	return out, nil
}

// parseDurationTicks reads a DURATION (cmd's option what) as a number of
// ticks: a bare whole number is ticks in either clock; a time with a unit
// (30s, 1.5m) needs real time and is rounded up to whole ticks, as step's
// is (durationTicks, clock.go).
func parseDurationTicks(w *sim.World, cmd, what, v string) (int, error) {
	ticks, read, err := durationTicks(cmd+" "+what, v, w)
	if err != nil {
		return 0, err
	}
	if read != "" {
		return ticks, nil
	}
	return parseAtLeast(cmd, what, v, 0, limitStep)
}

// runUntilGone is `run until closed Cn` (Cn's process, the one running
// now, has stopped) and `run until left Cn` (the coordinator no longer has
// the member it has for Cn now). Either does nothing, saying why, when it
// holds already; it is refused when Cn runs and nothing asked for it to
// close (close, restart --graceful, a roll), as it would wait for ever.
func runUntilGone(s *Session, how, client string) (*Result, error) {
	w := s.World()
	line := "run until " + how + " " + client
	m := w.Member(client)
	if m == nil {
		return nil, fmt.Errorf("%s: no member %s (members: %s)", line, client, strings.Join(liveClients(s), " "))
	}
	// done reads the world the run is at: a step works on a copy of the
	// session's world (issue 25's undo), so nothing read off w before the
	// run changes.
	var done func(*sim.World) bool
	var what string
	// Nothing will end the process or its membership: the run would wait for ever.
	stays := m.Alive && !m.Zombie && !w.Leaving(client)
	switch how {
	case "closed":
		if !m.Alive {
			return s.afterRunNote(fmt.Sprintf("%s (process %d) is not running: nothing to wait for", client, m.Inc), 0, ""), nil
		}
		what = fmt.Sprintf("%s (process %d) stopped", client, m.Inc)
		inc := m.Inc
		done = func(w *sim.World) bool {
			now := w.Member(client)
			return now == nil || now.Inc != inc || !now.Alive
		}
	case "left":
		ids, incs := w.MembersOf(client)
		if len(ids) == 0 {
			return s.afterRunNote(fmt.Sprintf("the coordinator has no member for %s: nothing to wait for", client), 0, ""), nil
		}
		// A member of an older process (a restart's, until its session
		// times out) leaves by itself.
		stays = stays && len(incs) == 1 && incs[0] == m.Inc
		what = "the coordinator no longer has " + strings.Join(ids, " ")
		done = func(w *sim.World) bool {
			now, _ := w.MembersOf(client)
			for _, now := range now {
				for _, id := range ids {
					if now == id {
						return false
					}
				}
			}
			return true
		}
	}
	if stays {
		return nil, fmt.Errorf("%s: %s is running and nothing is closing it (close %s, restart %s --graceful or roll it first)", line, client, client, client)
	}
	bound, recs := runBound(w, min(limitRunUntil.max, limitClock.max-w.Tick))
	ran, why := s.step(bound, done)
	if why == "interrupted" {
		return nil, interrupted("run")
	}
	if why == "" && !done(s.World()) && recs {
		return nil, recordsStopped(line, s.World(), ran)
	}
	if why == "" && !done(s.World()) {
		return nil, fmt.Errorf("%s: not %s within %d ticks (%s)", line, how, limitRunUntil.max, limitRunUntil.helpLine())
	}
	if why != "" && !done(s.World()) {
		return s.afterRun(ran, why), nil
	}
	return s.afterRunNote(what, ran, why), nil
}

// afterRunNote is afterRun with a line saying what the run waited for.
func (s *Session) afterRunNote(note string, ran int, why string) *Result {
	r := s.afterRun(ran, why)
	r.Text = note + "\n" + r.Text
	return r
}

// memberWords completes MEMBERS: all, the running members, and the range
// from the first running member to the last; after a comma, the running
// members not listed yet.
func memberWords(s *Session, _ []string, partial string) []string {
	live := natural.Sorted(append([]string(nil), s.World().LiveMembers()...))
	if len(live) == 0 {
		return nil
	}
	if i := strings.LastIndexByte(partial, ','); i >= 0 {
		head := partial[:i+1]
		listed := map[string]bool{}
		for _, e := range strings.Split(head, ",") {
			listed[e] = true
		}
		var out []string
		for _, c := range live {
			if !listed[c] {
				out = append(out, head+c)
			}
		}
		return out
	}
	out := []string{"all"}
	if len(live) > 1 {
		out = append(out, live[0]+".."+live[len(live)-1])
	}
	return append(out, live...)
}

// rollJSON is one roll in metrics --json.
type rollJSON struct {
	Members             []string `json:"members"`
	Mode                string   `json:"mode"` // graceful or kill
	Every               int      `json:"every_ticks"`
	WaitStable          bool     `json:"wait_stable"`
	Began               int      `json:"began"`
	Ended               *int     `json:"ended"` // null while under way
	Restarted           int      `json:"restarted"`
	Ticks               int      `json:"ticks"` // to its end, or to now
	Rebalances          int      `json:"rebalances"`
	PausePartitionTicks int      `json:"pause_partition_ticks"`
	// In real time (time ms) the same in milliseconds and partition x
	// seconds; absent on the page's scale.
	BeganMS               *int64   `json:"began_ms,omitempty"`
	EndedMS               *int64   `json:"ended_ms,omitempty"`
	DurationMS            *int64   `json:"duration_ms,omitempty"`
	PausePartitionSeconds *float64 `json:"pause_partition_seconds,omitempty"`
}

func rollsJSON(w *sim.World, clk clock) []rollJSON {
	var out []rollJSON
	for _, r := range w.Rolls() {
		j := rollJSON{Members: r.Members, Mode: "kill", Every: r.Every, WaitStable: r.WaitStable, Began: r.Began,
			Restarted: r.Restarted, Ticks: w.Tick - r.Began, Rebalances: r.Rebalances, PausePartitionTicks: r.PausePartitionTicks}
		if r.Graceful {
			j.Mode = "graceful"
		}
		if r.Ended >= 0 {
			e := r.Ended
			j.Ended, j.Ticks = &e, r.Ended-r.Began
		}
		if clk.real {
			began, dur := clk.ms(j.Began), clk.ms(j.Ticks)
			j.BeganMS, j.DurationMS, j.PausePartitionSeconds = &began, &dur, clk.seconds(j.PausePartitionTicks)
			if j.Ended != nil {
				ended := clk.ms(*j.Ended)
				j.EndedMS = &ended
			}
		}
		out = append(out, j)
	}
	return out
}

// rollsText is the rolls' table under metrics, "" when there were none.
// In real time the span and the pause read as times, the ticks beside.
func rollsText(rolls []rollJSON, clk clock) string {
	if len(rolls) == 0 {
		return ""
	}
	t := &Table{Header: []string{"ROLL", "MEMBERS", "MODE", "TICKS", "RESTARTED", "REBALANCES", "PAUSE (PARTITION x TICKS)"}}
	took, pause := strconv.Itoa, strconv.Itoa
	if clk.real {
		t.Header[3], t.Header[6] = "TOOK", "PAUSE (PARTITION x SECONDS)"
		took = func(n int) string { return fmt.Sprintf("%s (%d ticks)", clk.dur(n), n) }
		pause = func(n int) string { return fmt.Sprintf("%s (%d partition x ticks)", partSeconds(clk, n), n) }
	}
	for _, r := range rolls {
		span := fmt.Sprintf("%s..%s", clk.cell(r.Began), clk.cell(r.Began+r.Ticks))
		if r.Ended == nil {
			span = fmt.Sprintf("%s.. (under way)", clk.cell(r.Began))
		}
		t.Add(span, memberRuns(r.Members), r.Mode, took(r.Ticks),
			fmt.Sprintf("%d/%d", r.Restarted, len(r.Members)), strconv.Itoa(r.Rebalances), pause(r.PausePartitionTicks))
	}
	return "\nrolls (what the group paid while each ran):\n" + t.Text()
}
