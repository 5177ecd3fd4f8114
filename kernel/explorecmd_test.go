package kernel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExploreHealthAndUnavailability: two static members under the
// consumer protocol, each restarted (a kill and a start) at each tick of
// a window. A restarted static member's new process is refused with
// UNRELEASED_INSTANCE_ID when it comes back before the broker let its
// instance id go, and stops: those branches end unhealthy. explore's
// --json gives each branch its unavailability (the sum of its causes)
// and its health; the text has the columns and names the shortest
// unhealthy branch; and a class's saved script, replayed, counts from the
// fault on the unavailability the sweep gave its branch.
func TestExploreHealthAndUnavailability(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "set group.protocol consumer\nnew --members 0 --keep-settings\njoin C1 --static\njoin C2 --static\nrun until stable")
	line, err := s.Exec("explore --ticks 20..24 --faults restart --json")
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Unhealthy int `json:"unhealthy"`
		Outcomes  []struct {
			Tick        int            `json:"tick"`
			Member      string         `json:"member"`
			Unavailable int            `json:"unavailable_partition_ticks"`
			ByCause     map[string]int `json:"unavailable_by_cause"`
			Health      struct {
				OK    bool   `json:"ok"`
				Words string `json:"words"`
			} `json:"health"`
		} `json:"outcomes"`
	}
	if err := json.Unmarshal([]byte(line), &j); err != nil {
		t.Fatal(err)
	}
	sick := 0
	for _, o := range j.Outcomes {
		sum := 0
		for _, n := range o.ByCause {
			sum += n
		}
		if sum != o.Unavailable || len(o.ByCause) != 4 {
			t.Errorf("restart %s at %d: unavailability %d, by cause %v", o.Member, o.Tick, o.Unavailable, o.ByCause)
		}
		if o.Unavailable == 0 {
			t.Errorf("restart %s at %d: no partition x tick unavailable, yet its owner was killed", o.Member, o.Tick)
		}
		if !o.Health.OK {
			sick++
			if !strings.Contains(o.Health.Words, o.Member+" stopped: UNRELEASED_INSTANCE_ID") {
				t.Errorf("restart %s at %d ended %q", o.Member, o.Tick, o.Health.Words)
			}
		} else if o.Health.Words != "ok" {
			t.Errorf("restart %s at %d: ok, in words %q", o.Member, o.Tick, o.Health.Words)
		}
	}
	if sick == 0 || sick != j.Unhealthy {
		t.Fatalf("%d branches ended unhealthy, the report says %d", sick, j.Unhealthy)
	}

	out, err := s.Exec("explore --ticks 20..24 --faults restart --save cex")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CLASS", "UNAVAILABLE", "HEALTH", "unhealthy", "unavailable from the fault on: ",
		" of 10 branches ended unhealthy; the shortest, restart C"} {
		if !strings.Contains(out, want) {
			t.Errorf("explore's text lacks %q:\n%s", want, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(s.Dir, "cex", "*.kg"))
	if len(files) == 0 {
		t.Fatalf("no script saved:\n%s", out)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The script's comment names its branch: "# explore: restart C1 at tick 21 -> ...".
		script := string(data)
		i := strings.Index(script, "# explore: ")
		fault, _, _ := strings.Cut(script[i+len("# explore: "):], " at tick ")
		r := NewSession()
		before := -1
		for _, l := range strings.Split(strings.TrimSpace(script), "\n") {
			if l == fault {
				before = unavailableNow(t, r)
			}
			if _, err := r.Exec(l); err != nil {
				t.Fatalf("%s: %s: %v", filepath.Base(f), l, err)
			}
		}
		var tick int
		var member string
		if _, err := fmt.Sscanf(script[i:], "# explore: restart %s at tick %d", &member, &tick); err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		found := false
		for _, o := range j.Outcomes {
			if o.Tick == tick && o.Member == member {
				found = true
				if got := unavailableNow(t, r) - before; got != o.Unavailable {
					t.Errorf("%s replayed counts %d partition x ticks from the fault on; the sweep gave its branch %d", filepath.Base(f), got, o.Unavailable)
				}
			}
		}
		if !found {
			t.Errorf("%s: no branch restart %s at %d in the sweep", filepath.Base(f), member, tick)
		}
	}
}

func unavailableNow(t *testing.T, s *Session) int {
	t.Helper()
	line, err := s.Exec("metrics --json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Unavailable int `json:"unavailable_partition_ticks"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	return m.Unavailable
}
