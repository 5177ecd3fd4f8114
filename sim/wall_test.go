package sim

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The walls between the engine's rooms, pinned: each node package (the
// client process, the group coordinator, the transaction coordinator, the
// broker) and each layer under them may import only what the table says.
// A client file cannot name a coordinator identifier (or the reverse)
// without importing the other's package, and no node package may import
// the World (package sim) or a sibling node: nodes meet only through
// packets on the wire (sim/env) and the World's small interfaces
// (client.Host, coord.Processes, broker.Senders, trace.Sources).
var walls = map[string][]string{
	"wire":           {},
	"internal/store": {},
	"javaorder":      {},
	"topo":           {"internal/store", "wire"},
	"trace":          {"internal/store", "topo", "wire"},
	"env":            {"internal/store", "topo", "trace", "wire"},
	"assign":         {"javaorder", "wire"},
	"assign/server":  {"assign", "javaorder"},
	"reconcile":      {"assign"},
	"txncoord":       {"env", "internal/store", "topo", "trace", "wire"},
	"broker":         {"env", "internal/store", "topo", "trace", "wire"},
	"coord":          {"assign", "assign/server", "env", "internal/store", "reconcile", "topo", "trace", "wire"},
	"client":         {"assign", "env", "internal/store", "topo", "trace", "wire"},
}

const modulePrefix = "github.com/kgrepl/kgrepl/"

func TestWallsBetweenRooms(t *testing.T) {
	for dir, allowed := range walls {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v): the table names a package that moved", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue // tests may reach across (simtest builds whole worlds)
			}
			for _, imp := range importsOf(t, f) {
				if !strings.HasPrefix(imp, modulePrefix) {
					continue // the standard library and third-party modules
				}
				rel, inSim := strings.CutPrefix(imp, modulePrefix+"sim/")
				switch {
				case imp == modulePrefix+"sim":
					t.Errorf("%s imports the World (package sim): a node is handed an environment, never the World", f)
				case !inSim:
					t.Errorf("%s imports %s, outside the engine", f, imp)
				case !slices.Contains(allowed, rel):
					t.Errorf("%s imports sim/%s: sim/%s may import only %v", f, rel, dir, allowed)
				}
			}
		}
	}
}

// TestWallsCatchACrossing: the wall test's reading of imports finds a
// client file that names the coordinator.
func TestWallsCatchACrossing(t *testing.T) {
	f := filepath.Join(t.TempDir(), "x.go")
	src := "package client\n\nimport (\n\t\"fmt\"\n\t\"github.com/kgrepl/kgrepl/sim/coord\"\n)\n\nvar _ = coord.New\nvar _ = fmt.Sprint\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := importsOf(t, f)
	if !slices.Contains(got, modulePrefix+"sim/coord") || slices.Contains(walls["client"], "coord") {
		t.Fatalf("imports %v: the wall would let a client file name the coordinator", got)
	}
}

func importsOf(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			t.Fatalf("%s: import %s: %v", file, s.Path.Value, err)
		}
		out = append(out, p)
	}
	return out
}
