package kernel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A damaged or foreign session file gives a clear error and leaves the
// session as it was; a saved session loads back to the same state.
func TestLoadRefusesBadFilesAndKeepsTheSession(t *testing.T) {
	s := NewSession()
	s.Dir = t.TempDir()
	runLines(t, s, "join C2\nrun until stable\nstep 7")
	before := views(t, s)
	cases := map[string]string{
		"foreign.kg":  "hello world\n",
		"future.kg":   "# kgrepl session v9\nnew\n",
		"damaged.kg":  "# kgrepl session v1\nnew\njoin C2\nstep 3\nfrobnicate\n",
		"badvalue.kg": "# kgrepl session v1\nset session.timeout.ms never\nnew\n",
	}
	wants := map[string]string{
		"foreign.kg":  "not a kgrepl session file",
		"future.kg":   "a session format this kgrepl does not read",
		"damaged.kg":  `line 5: "frobnicate" is not a world input`,
		"badvalue.kg": "line 2: set: session.timeout.ms",
	}
	for name, body := range cases {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := s.Exec("load " + name)
		if err == nil || !strings.Contains(err.Error(), wants[name]) {
			t.Errorf("load %s: %v, want an error with %q", name, err, wants[name])
		}
		if views(t, s) != before {
			t.Errorf("load %s changed the session", name)
		}
	}
	if _, err := s.Exec("save good.kg"); err != nil {
		t.Fatal(err)
	}
	fresh := NewSession()
	fresh.Dir = s.Dir
	if _, err := fresh.Exec("load good.kg"); err != nil {
		t.Fatal(err)
	}
	if views(t, fresh) != before {
		t.Error("a saved session loads back to a different state")
	}
	// The file is written through a rename: no temporary file is left behind.
	left, _ := filepath.Glob(filepath.Join(s.Dir, ".kgrepl-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// compare reruns what was typed, so `run until stable` keeps its meaning
// under a protocol that needs two rebalances per join.
func TestCompareRerunsTheTypedHistory(t *testing.T) {
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable\njoin C3\nrun until stable")
	rows, err := s.Compare([]string{"partition.assignment.strategy"}, [][]string{{"range", "cooperative-sticky"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Error != "" || rows[1].Error != "" {
		t.Fatalf("rows %+v", rows)
	}
	if rows[0].Generation != 3 || rows[1].Generation != 5 {
		t.Errorf("generations range %d, cooperative-sticky %d: want 3 and 5 (one and two rebalances per join)", rows[0].Generation, rows[1].Generation)
	}
	if rows[1].Pause >= rows[0].Pause {
		t.Errorf("pause meter cooperative %d, range %d: want cooperative lower", rows[1].Pause, rows[0].Pause)
	}
	out, err := s.Exec("compare commit after,before producer idempotent,transactional --json")
	if err != nil || !strings.Contains(out, `"settings":"commit=before producer=transactional"`) {
		t.Errorf("compare of two keys: %v %s", err, out)
	}
	if _, err := s.Exec("compare commit sometimes"); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("a bad value: %v", err)
	}
}
