// Command gen writes the notebooks in notebooks/: 00-tour.ipynb and one
// notebook per demo, built from the demo scripts (kernel/demos/*.kg) so
// they never drift from `demo N`. Run it by hand from the repository's
// root after changing a demo or the text here, then write their outputs:
//
//	go run ./notebooks/gen && scripts/notebooks.sh --update
//
// It leaves alone a notebook whose cells are unchanged, keeps the committed
// outputs of one whose text alone changed (outputs come from the code), and
// writes one whose code changed without outputs. Its test fails when the
// committed notebooks' cells differ from what it writes;
// scripts/notebooks.sh fails when their outputs differ from a fresh run.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel"
)

func main() {
	dir := flag.String("dir", "notebooks", "the folder to write the notebooks in")
	flag.Parse()
	files, err := Build()
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(*dir, n)
		// A notebook whose cells are what gen writes keeps its committed
		// outputs; a changed one is written without outputs, for
		// scripts/notebooks.sh --update to run.
		data, note := files[n], "without outputs: scripts/notebooks.sh --update writes them"
		if old, err := os.ReadFile(path); err == nil {
			if same, err := sameCells(old, data); err == nil && same {
				continue
			}
			if kept, ok, err := keepOutputs(old, data); err == nil && ok {
				data, note = kept, "its text only: outputs kept"
			}
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println("wrote", path, "("+note+")")
	}
}

// stripped is a notebook as gen writes it: every code cell without
// outputs and execution count.
func stripped(data []byte) ([]byte, error) {
	var nb map[string]any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&nb); err != nil {
		return nil, err
	}
	cells, _ := nb["cells"].([]any)
	for _, c := range cells {
		if m, ok := c.(map[string]any); ok && m["cell_type"] == "code" {
			m["outputs"] = []any{}
			m["execution_count"] = nil
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(nb); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// keepOutputs gives the generated notebook the committed one's outputs and
// execution counts when the two have the same code cells (ids and
// sources, in order): outputs come from the code alone, so a change of
// text (markdown) keeps them. ok is false when the code differs.
func keepOutputs(committed, generated []byte) (out []byte, ok bool, err error) {
	var old, nb map[string]any
	for _, x := range []struct {
		data []byte
		to   *map[string]any
	}{{committed, &old}, {generated, &nb}} {
		d := json.NewDecoder(bytes.NewReader(x.data))
		d.UseNumber()
		if err := d.Decode(x.to); err != nil {
			return nil, false, err
		}
	}
	code := func(nb map[string]any) []map[string]any {
		var cs []map[string]any
		cells, _ := nb["cells"].([]any)
		for _, c := range cells {
			if m, ok := c.(map[string]any); ok && m["cell_type"] == "code" {
				cs = append(cs, m)
			}
		}
		return cs
	}
	was, now := code(old), code(nb)
	if len(was) != len(now) {
		return nil, false, nil
	}
	for i := range now {
		if now[i]["id"] != was[i]["id"] || !reflect.DeepEqual(now[i]["source"], was[i]["source"]) {
			return nil, false, nil
		}
	}
	for i := range now {
		now[i]["outputs"], now[i]["execution_count"] = was[i]["outputs"], was[i]["execution_count"]
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(nb); err != nil {
		return nil, false, err
	}
	return b.Bytes(), true, nil
}

// sameCells says whether a committed notebook, its outputs left out, is
// what gen writes.
func sameCells(committed, generated []byte) (bool, error) {
	a, err := stripped(committed)
	if err != nil {
		return false, err
	}
	b, err := stripped(generated)
	if err != nil {
		return false, err
	}
	return bytes.Equal(a, b), nil
}

// cell is one notebook cell: markdown, or Go code for GoNB.
type cell struct {
	markdown bool
	src      string
}

func md(s string) cell   { return cell{markdown: true, src: strings.TrimSpace(s)} }
func code(s string) cell { return cell{src: strings.TrimSpace(s)} }

// goCell is a cell whose lines are statements of main (GoNB's %%).
func goCell(lines ...string) cell { return code("%%\n" + strings.Join(lines, "\n")) }

func run(cmd string) string      { return "s.Run(" + strconv.Quote(cmd) + ")" }
func show(view string) string    { return "s.Show(" + strconv.Quote(view) + ")" }
func quiet(cmd string) string    { return "s.Quiet(" + strconv.Quote(cmd) + ")" }
func plot(args ...string) string { return "s.Plot(" + quoteAll(args) + ")" }
func sequence(args ...string) string {
	return "s.Sequence(" + quoteAll(args) + ")"
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return strings.Join(q, ", ")
}

// setup is the same first code cells in every notebook: pin this module
// (GoNB would otherwise ask the module proxy for it), import nb, and
// declare the session every later cell resumes. setupNote says so, under
// the first picture, so that the picture comes first.
func setup() []cell {
	return []cell{
		code("!*go mod edit -require=github.com/kgrepl/kgrepl@v0.0.0 -replace=github.com/kgrepl/kgrepl=$GONB_JUPYTER_ROOT/.."),
		code("import \"github.com/kgrepl/kgrepl/kernel/nb\"\n\n// s is this notebook's kgrepl session; each cell resumes it where the last one left it.\nvar s = nb.Resume()"),
	}
}

const setupNote = "The two cells at the top point GoNB at this repository (`$GONB_JUPYTER_ROOT/..`) and declare `s`, the kgrepl session. " +
	"GoNB runs every cell as a new program: `nb.Resume()` replays what the cells before did, so each cell starts where the last one stopped."

// scrubNote says how to use a slider, under the first one of a notebook.
const scrubNote = "Drag the slider (or click it and use ← →) to see any tick: the world diagram, the pause meter with its cursor on that tick, " +
	"and what happened in it; ▶ plays the ticks in turn. Where no script runs (a code host) the diagram plays by itself; " +
	"Jupyter shows the pictures of a notebook it did not run only once you run its cells or trust it (`jupyter trust`)."

// extra is what a demo's notebook adds to its script: cells after a
// command line of the script ("" = at the end).
type extra struct {
	after string
	cells []cell
}

// demoNotebook is the text a demo's notebook wraps around its script.
type demoNotebook struct {
	intro string
	// scrub is the options of the slider the notebook opens with, over
	// the demo's most telling ticks (a frame a tick, so a window, not all).
	scrub   string
	replace map[string][]string // a script line -> the code that stands for it
	extras  []extra
}

var viewCommands = map[string]bool{"describe": true, "offsets": true, "log": true, "txn": true, "consume": true,
	"trace": true, "metrics": true, "members": true, "show": true, "branches": true}

// fromScript turns a demo script into cells: its comments become markdown,
// its commands code, with the notebook's extras placed after their lines.
func fromScript(n int, d demoNotebook) ([]cell, string, error) {
	text, err := kernel.DemoScript(n)
	if err != nil {
		return nil, "", err
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	title := strings.TrimSpace(strings.TrimPrefix(lines[0], "#"))
	var cells []cell
	var mdBuf, codeBuf []string
	flushMD := func() {
		if len(mdBuf) > 0 {
			cells = append(cells, md(strings.Join(mdBuf, "\n")))
			mdBuf = nil
		}
	}
	flushCode := func() {
		if len(codeBuf) > 0 {
			cells = append(cells, goCell(codeBuf...))
			codeBuf = nil
		}
	}
	used := map[string]bool{}
	for _, raw := range lines[1:] {
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#"):
			flushCode()
			mdBuf = append(mdBuf, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			continue
		}
		flushMD()
		if rep, ok := d.replace[line]; ok {
			codeBuf = append(codeBuf, rep...)
			used["replace:"+line] = true
		} else if viewCommands[strings.Fields(line)[0]] {
			codeBuf = append(codeBuf, show(line))
		} else {
			codeBuf = append(codeBuf, run(line))
		}
		for i, e := range d.extras {
			if e.after == line && !used[strconv.Itoa(i)] {
				used[strconv.Itoa(i)] = true
				flushCode()
				cells = append(cells, e.cells...)
			}
		}
	}
	flushMD()
	flushCode()
	for i, e := range d.extras {
		if e.after == "" {
			used[strconv.Itoa(i)] = true
			cells = append(cells, e.cells...)
		}
		if !used[strconv.Itoa(i)] {
			return nil, "", fmt.Errorf("demo %d: the notebook adds cells after %q, which the script does not have", n, e.after)
		}
	}
	for line := range d.replace {
		if !used["replace:"+line] {
			return nil, "", fmt.Errorf("demo %d: the notebook replaces %q, which the script does not have", n, line)
		}
	}
	return cells, title, nil
}

// Build makes every notebook, by file name.
func Build() (map[string][]byte, error) {
	files := map[string][]byte{}
	tour, err := encode(0, tourCells())
	if err != nil {
		return nil, err
	}
	files["00-tour.ipynb"] = tour
	for n := 1; n <= len(demos); n++ {
		d := demos[n-1]
		body, title, err := fromScript(n, d)
		if err != nil {
			return nil, err
		}
		if d.scrub == "" {
			return nil, fmt.Errorf("demo %d: the notebook has no slider to open with", n)
		}
		cells := []cell{md(fmt.Sprintf("# Demo %d: %s\n\n%s", n, title, strings.TrimSpace(d.intro)))}
		cells = append(cells, setup()...)
		cells = append(cells, goCell(fmt.Sprintf("s.Demo(%d)", n), "s.Scrub("+quoteAll(strings.Fields(d.scrub))+")"),
			md(fmt.Sprintf("The whole demo at a glance: `demo %d` in the REPL (its transcript is folded under its title). %s\n\n"+
				"Below, the same script a step per cell, with the pictures in between. %s", n, scrubNote, setupNote)),
			md("Start from the default world: group `billing`, C1 reading all six partitions of `orders` and `payments` in generation 1."),
			goCell("s.Reset()"))
		cells = append(cells, body...)
		cells = append(cells, md("---\nBack to the [tour](00-tour.ipynb). Every picture here can be made in the REPL too: `diagram`, `plot KIND`, `sequence` (see `help plot`)."))
		data, err := encode(n, cells)
		if err != nil {
			return nil, err
		}
		files[fmt.Sprintf("%02d-%s.ipynb", n, slugs[n-1])] = data
	}
	return files, nil
}

// slugs name the demo notebooks' files.
var slugs = []string{"rebalance", "range-eager", "cooperative-sticky", "commit-after", "commit-before", "leaving",
	"zombie", "idempotent-producer", "idempotence-not-enough", "transactions", "read-committed-lso", "zombie-fencing",
	"consumer-protocol", "rolling-restart", "rolling-upgrade", "assignor-upgrade"}

// The notebook format: nbformat 4.5, with cell ids, no outputs.
type notebook struct {
	Cells         []nbCell       `json:"cells"`
	Metadata      map[string]any `json:"metadata"`
	NBFormat      int            `json:"nbformat"`
	NBFormatMinor int            `json:"nbformat_minor"`
}

type nbCell struct {
	CellType       string         `json:"cell_type"`
	ExecutionCount *int           `json:"execution_count,omitempty"`
	ID             string         `json:"id"`
	Metadata       map[string]any `json:"metadata"`
	Outputs        *[]any         `json:"outputs,omitempty"`
	Source         []string       `json:"source"`
}

func encode(n int, cells []cell) ([]byte, error) {
	nb := notebook{
		Metadata: map[string]any{
			"kernelspec":    map[string]any{"display_name": "Go (gonb)", "language": "go", "name": "gonb"},
			"language_info": map[string]any{"codemirror_mode": "", "file_extension": ".go", "mimetype": "", "name": "go", "nbconvert_exporter": "", "pygments_lexer": "", "version": "go1.26"},
		},
		NBFormat: 4, NBFormatMinor: 5,
	}
	for i, c := range cells {
		nc := nbCell{ID: fmt.Sprintf("kgrepl-%02d-%03d", n, i), Metadata: map[string]any{}, Source: sourceLines(c.src)}
		if c.markdown {
			nc.CellType = "markdown"
		} else {
			nc.CellType = "code"
			outs := []any{}
			nc.Outputs = &outs
		}
		nb.Cells = append(nb.Cells, nc)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(nb); err != nil {
		return nil, err
	}
	// execution_count is null in a stripped notebook; encoding/json drops a nil pointer with omitempty,
	// so put it back for code cells.
	out := bytes.ReplaceAll(b.Bytes(), []byte("\"cell_type\": \"code\",\n"), []byte("\"cell_type\": \"code\",\n   \"execution_count\": null,\n"))
	return out, nil
}

// sourceLines splits a cell's text as Jupyter stores it: every line but the
// last keeps its newline.
func sourceLines(s string) []string {
	parts := strings.SplitAfter(s, "\n")
	if len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}
