package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Deploys through the binary: restart --graceful, roll, run until
// closed|left, as a script a platform engineer would write.

// staticWorld is a script's first lines: three static members under protocol.
func staticWorld(protocol string) string {
	return "set C1.group.instance.id C1\nset C2.group.instance.id C2\nset C3.group.instance.id C3\n" +
		"set group.protocol " + protocol + "\nnew --members 3 --keep-settings\n"
}

type groupJSON struct {
	State   string `json:"state"`
	Members []struct {
		MemberID   string   `json:"member_id"`
		ClientID   string   `json:"client_id"`
		InstanceID *string  `json:"instance_id"`
		Partitions []string `json:"partitions"`
	} `json:"members"`
}

type traceJSON struct {
	Packets []struct {
		From  string  `json:"from"`
		To    string  `json:"to"`
		Type  string  `json:"type"`
		Error *string `json:"error"`
	} `json:"packets"`
}

// lastLines are the script's last n lines of output.
func lastLines(t *testing.T, out string, n int) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < n {
		t.Fatalf("want at least %d lines:\n%s", n, out)
	}
	return lines[len(lines)-n:]
}

// fenced lists the fatal errors of a trace: a member refused its instance
// id or its epoch.
func fenced(t *testing.T, line string) []string {
	t.Helper()
	var tr traceJSON
	if err := json.Unmarshal([]byte(line), &tr); err != nil {
		t.Fatalf("trace --json: %v\n%s", err, line)
	}
	var out []string
	for _, p := range tr.Packets {
		if p.Error != nil && (*p.Error == "UNRELEASED_INSTANCE_ID" || *p.Error == "FENCED_INSTANCE_ID" || *p.Error == "FENCED_MEMBER_EPOCH") {
			out = append(out, p.Type+" to "+p.To+": "+*p.Error)
		}
	}
	return out
}

// restart C2 --graceful of a static member leaves the group alive under
// both protocols: nobody is refused UNRELEASED_INSTANCE_ID or fenced, and
// C2's new instance holds partitions. The kill (plain restart) of the same
// member under the consumer protocol is refused UNRELEASED_INSTANCE_ID:
// the check tells the two apart.
func TestRestartGracefulStaticMember(t *testing.T) {
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			out, errs, code := kgrepl(t, staticWorld(protocol)+"step 4\nrestart C2 --graceful\nrun until stable\ndescribe group --json\ntrace --json\n")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			last := lastLines(t, out, 2)
			if f := fenced(t, last[1]); len(f) > 0 {
				t.Errorf("a graceful restart fenced: %v", f)
			}
			var g groupJSON
			if err := json.Unmarshal([]byte(last[0]), &g); err != nil {
				t.Fatal(err)
			}
			ids := map[string]int{}
			for _, m := range g.Members {
				ids[m.MemberID] = len(m.Partitions)
			}
			if len(g.Members) != 3 || ids["C2-2"] == 0 || ids["C1-1"] == 0 || ids["C3-1"] == 0 {
				t.Errorf("the group after the restart: %+v; want C1-1, C2-2, C3-1, each with partitions", g.Members)
			}
		})
	}
	out, errs, code := kgrepl(t, staticWorld("consumer")+"step 4\nrestart C2\nstep 20\ntrace --json\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if f := fenced(t, lastLines(t, out, 1)[0]); !strings.Contains(strings.Join(f, " "), "UNRELEASED_INSTANCE_ID") {
		t.Errorf("restart (the kill) of a static consumer member: fatal errors %v, want UNRELEASED_INSTANCE_ID", f)
	}
}

// roll C1..C3 --wait-stable restarts the three in turn, prints its
// progress, and metrics counts what it cost; back into the roll, a file
// saved in its middle, and the same script run again all end the same,
// byte for byte.
func TestRollThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	views := "metrics --json\ndescribe group --json\ntrace --json\n"
	mid := filepath.Join(dir, "mid.kg")
	script := staticWorld("classic") + "roll C1..C3 --wait-stable\nstep 9\nsave " + mid + "\nrun until stable\n" + views
	out, errs, code := kgrepl(t, script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"roll 1/3: C1 closes", "roll 2/3: C2 closes", "roll 3/3: C3 closes", "roll done: 3 member(s) restarted"} {
		if !strings.Contains(out, want) {
			t.Errorf("the roll's narration has no %q:\n%s", want, out)
		}
	}
	end := lastLines(t, out, 3)
	var m struct {
		Rebalances int `json:"rebalances"`
		Pause      int `json:"pause_partition_ticks"`
		Rolls      []struct {
			Members    []string `json:"members"`
			Mode       string   `json:"mode"`
			Ended      *int     `json:"ended"`
			Restarted  int      `json:"restarted"`
			Rebalances int      `json:"rebalances"`
			Pause      int      `json:"pause_partition_ticks"`
		} `json:"rolls"`
	}
	if err := json.Unmarshal([]byte(end[0]), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Rolls) != 1 || m.Rolls[0].Ended == nil || m.Rolls[0].Restarted != 3 || m.Rolls[0].Mode != "graceful" ||
		m.Rolls[0].Rebalances != m.Rebalances || m.Rolls[0].Pause != m.Pause {
		// The roll began at tick 0: what it cost is all the group counted.
		t.Errorf("metrics --json rolls: %+v (rebalances %d, pause %d); want one graceful roll, ended, 3 restarted, the group's rebalances and pause", m.Rolls, m.Rebalances, m.Pause)
	}
	if f := fenced(t, end[2]); len(f) > 0 {
		t.Errorf("the roll fenced: %v", f)
	}
	// The file saved mid-roll, loaded in another process.
	out2, errs, code := kgrepl(t, "load "+mid+"\nrun until stable\n"+views)
	if code != 0 {
		t.Fatalf("load: exit %d: %s", code, errs)
	}
	if got := lastLines(t, out2, 3); strings.Join(got, "\n") != strings.Join(end, "\n") {
		t.Errorf("loaded mid-roll and run until stable, the views differ from the first run's")
	}
	// back into the roll, then on: the same end.
	out3, errs, code := kgrepl(t, strings.ReplaceAll(script, "save "+mid+"\n", "")+"back 20\nrun until stable\n"+views)
	if code != 0 {
		t.Fatalf("back: exit %d: %s", code, errs)
	}
	if got := lastLines(t, out3, 3); strings.Join(got, "\n") != strings.Join(end, "\n") {
		t.Errorf("back 20 and run until stable: the views differ from the first run's")
	}
}

// run until closed and run until left, and a script that asks for one
// with nothing closing the member stops there, naming the line.
func TestRunUntilClosedLeftThroughTheBinary(t *testing.T) {
	out, errs, code := kgrepl(t, staticWorld("classic")+"step 4\nclose C2\nrun until closed C2\nrun until left C2\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"C2 closed", "C2 (process 1) stopped", "coordinator removes C2-1: session timeout", "the coordinator no longer has C2-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	out, errs, code = kgrepl(t, "new --members 3\nrun until closed C2\nstep 1\n")
	if code != 1 || !strings.Contains(errs, "line 2: run until closed C2: C2 is running and nothing is closing it") || strings.Contains(out, "tick 1") {
		t.Errorf("exit %d, stderr %q, stdout %q: want line 2 refused and nothing after it", code, errs, out)
	}
	_, errs, code = kgrepl(t, "new --members 3\nroll C1..C5\n")
	if code != 1 || !strings.Contains(errs, "line 2: roll C1..C5: names more members than the world's 3 client(s)") {
		t.Errorf("exit %d, stderr %q: want roll C1..C5 refused on line 2", code, errs)
	}
}
