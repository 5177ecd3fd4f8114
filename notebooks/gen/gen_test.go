package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
)

// TestCommittedNotebooksAreGenerated: the notebooks in notebooks/ are what
// this program writes, their outputs left out (run `go run ./notebooks/gen`
// after changing a demo; scripts/notebooks.sh checks the outputs).
func TestCommittedNotebooksAreGenerated(t *testing.T) {
	files, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 17 {
		t.Errorf("%d notebooks, want the tour and 16 demos", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Errorf("%v (run go run ./notebooks/gen)", err)
			continue
		}
		same, err := sameCells(got, want)
		if err != nil {
			t.Errorf("notebooks/%s: %v", name, err)
		} else if !same {
			t.Errorf("notebooks/%s is not what gen writes; run go run ./notebooks/gen && scripts/notebooks.sh --update", name)
		}
	}
	committed, _ := filepath.Glob(filepath.Join("..", "*.ipynb"))
	for _, path := range committed {
		if _, ok := files[filepath.Base(path)]; !ok {
			t.Errorf("%s is not made by gen", path)
		}
	}
}

type nbFile struct {
	Cells []struct {
		CellType string   `json:"cell_type"`
		Source   []string `json:"source"`
		Outputs  []any    `json:"outputs"`
		ID       string   `json:"id"`
	} `json:"cells"`
	Metadata struct {
		Kernelspec struct {
			Name string `json:"name"`
		} `json:"kernelspec"`
	} `json:"metadata"`
	NBFormat int `json:"nbformat"`
}

func TestNotebookShape(t *testing.T) {
	files, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		var nb nbFile
		if err := json.Unmarshal(data, &nb); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if nb.Metadata.Kernelspec.Name != "gonb" || nb.NBFormat != 4 {
			t.Errorf("%s: kernel %q, nbformat %d", name, nb.Metadata.Kernelspec.Name, nb.NBFormat)
		}
		var codes []string
		ids := map[string]bool{}
		all := ""
		for _, c := range nb.Cells {
			src := strings.Join(c.Source, "")
			if ids[c.ID] {
				t.Errorf("%s: cell id %s twice", name, c.ID)
			}
			ids[c.ID] = true
			if c.CellType == "code" {
				codes = append(codes, src)
				if len(c.Outputs) != 0 {
					t.Errorf("%s: gen wrote a cell with outputs; outputs come from scripts/notebooks.sh --update", name)
				}
				if !strings.HasPrefix(src, "!*") && !strings.HasPrefix(src, "import") && !strings.HasPrefix(src, "%%") {
					t.Errorf("%s: code cell %q is neither a shell line, declarations nor %%%%", name, src)
				}
			}
			all += src + "\n"
		}
		if len(codes) == 0 || codes[0] != "!*go mod edit -require=github.com/kgrepl/kgrepl@v0.0.0 -replace=github.com/kgrepl/kgrepl=$GONB_JUPYTER_ROOT/.." {
			t.Errorf("%s: the first code cell does not pin the module", name)
		}
		for _, want := range []string{"var s = nb.Resume()", "s.Diagram()", "s.Plot(", "s.Show("} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: no %s", name, want)
			}
		}
	}
}

// TestDemoNotebooksRunTheirScript: a demo's notebook runs every command of
// the demo's script, in order, so it shows what `demo N` shows.
func TestDemoNotebooksRunTheirScript(t *testing.T) {
	files, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= len(demos); n++ {
		var nb nbFile
		name := ""
		for f := range files {
			if strings.HasPrefix(f, pad(n)+"-") {
				name = f
			}
		}
		if err := json.Unmarshal(files[name], &nb); err != nil {
			t.Fatal(err)
		}
		code := ""
		for _, c := range nb.Cells {
			if c.CellType == "code" {
				code += strings.Join(c.Source, "") + "\n"
			}
		}
		script, _ := kernel.DemoScript(n)
		at := 0
		for _, line := range strings.Split(script, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if _, replaced := demos[n-1].replace[line]; replaced {
				continue
			}
			i := strings.Index(code[at:], strconv.Quote(line))
			if i < 0 {
				t.Errorf("%s: does not run %q (in order)", name, line)
				continue
			}
			at += i
		}
	}
}

func pad(n int) string {
	s := strconv.Itoa(n)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

func TestFromScriptRejectsMissingAnchors(t *testing.T) {
	_, _, err := fromScript(1, demoNotebook{extras: []extra{{after: "no such line", cells: []cell{md("x")}}}})
	if err == nil || !strings.Contains(err.Error(), "no such line") {
		t.Errorf("a missing anchor: %v", err)
	}
}

// TestSameCellsLeavesOutOutputsOnly: a committed notebook with outputs is
// the generated one; a changed source is not.
func TestSameCellsLeavesOutOutputsOnly(t *testing.T) {
	files, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	gen := files["01-rebalance.ipynb"]
	withOutputs := strings.Replace(string(gen), `"execution_count": null,
   "id": "kgrepl-01-002",
   "metadata": {},
   "outputs": [],`, `"execution_count": 2,
   "id": "kgrepl-01-002",
   "metadata": {},
   "outputs": [{"data": {"text/html": ["<b>x</b>"]}, "metadata": {}, "output_type": "display_data"}],`, 1)
	if withOutputs == string(gen) {
		t.Fatal("the test's notebook has no cell kgrepl-01-002 to give outputs")
	}
	if same, err := sameCells([]byte(withOutputs), gen); err != nil || !same {
		t.Errorf("a notebook with outputs is not its generated self: %v %v", same, err)
	}
	changed := strings.Replace(withOutputs, "s.Reset()", "s.Reset() ", 1)
	if same, _ := sameCells([]byte(changed), gen); same {
		t.Error("a changed cell went unnoticed")
	}
}

// TestCommittedNotebooksHaveOutputs: the notebooks are committed run, so
// that a code host shows their pictures: every code cell has its execution
// count, and the first slider's output is there (scripts/notebooks.sh
// --update writes them; scripts/notebooks.sh checks them against a fresh run).
func TestCommittedNotebooksHaveOutputs(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "*.ipynb"))
	if len(paths) == 0 {
		t.Fatal("no notebook in notebooks/")
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var nb struct {
			Cells []struct {
				CellType       string   `json:"cell_type"`
				ExecutionCount *int     `json:"execution_count"`
				Source         []string `json:"source"`
				Outputs        []struct {
					Data map[string]any `json:"data"`
				} `json:"outputs"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(data, &nb); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		slider := false
		for _, c := range nb.Cells {
			if c.CellType != "code" {
				continue
			}
			if c.ExecutionCount == nil {
				t.Errorf("%s: cell %.40q was not run (scripts/notebooks.sh --update)", path, strings.Join(c.Source, ""))
				break
			}
			for _, o := range c.Outputs {
				if h, ok := o.Data["text/html"].([]any); ok && len(h) > 0 && strings.Contains(fmt.Sprint(h...), `class="kgrepl-scrub"`) {
					slider = true
				}
			}
		}
		if !slider {
			t.Errorf("%s: no tick slider in its outputs", path)
		}
	}
}

// TestKeepOutputsAcrossATextChange: a change of markdown keeps the
// committed outputs; a change of code does not.
func TestKeepOutputsAcrossATextChange(t *testing.T) {
	files, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	gen := string(files["01-rebalance.ipynb"])
	committed := strings.Replace(gen, `"execution_count": null,
   "id": "kgrepl-01-002",
   "metadata": {},
   "outputs": [],`, `"execution_count": 2,
   "id": "kgrepl-01-002",
   "metadata": {},
   "outputs": [{"data": {"text/html": ["<b>x</b>"]}, "metadata": {}, "output_type": "display_data"}],`, 1)
	text := strings.Replace(gen, "# Demo 1:", "# Demo one:", 1)
	kept, ok, err := keepOutputs([]byte(committed), []byte(text))
	if err != nil || !ok {
		t.Fatalf("a change of text: ok %v, %v", ok, err)
	}
	if !strings.Contains(string(kept), "# Demo one:") || !strings.Contains(string(kept), `"execution_count": 2,`) || !strings.Contains(string(kept), "<b>x</b>") {
		t.Errorf("the new text with the old outputs, got:\n%.600s", kept)
	}
	if same, _ := sameCells(kept, []byte(text)); !same {
		t.Error("the kept notebook's cells are not the generated ones")
	}
	codeChanged := strings.Replace(text, "s.Reset()", "s.Reset() ", 1)
	if _, ok, _ := keepOutputs([]byte(committed), []byte(codeChanged)); ok {
		t.Error("a change of code kept the outputs")
	}
}
