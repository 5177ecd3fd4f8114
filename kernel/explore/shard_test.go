package explore_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/explore"
)

// TestShardsMergeToTheFullRun: for several N, shards 1..N of a sweep,
// written to shard files and read back, merge (in any order) into the
// report of the whole sweep run at once, and each shard holds exactly the
// full run's rows at its indexes.
func TestShardsMergeToTheFullRun(t *testing.T) {
	w := base(t, "set commit after").World()
	opts := explore.Options{From: w.Tick, To: w.Tick + 20, Parallel: 2}
	full, err := explore.Run(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	total := len(full.Outcomes)
	parts := map[int]*explore.Part{}
	for k := 1; k <= 7; k++ {
		if parts[k], err = explore.RunShard(w, opts, k, 7); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{1, 2, 3, 7, total, total + 5} {
		var got []*explore.Part
		var names []string
		for k := n; k >= 1; k-- { // backwards: the order of the files does not matter
			var p *explore.Part
			if n == 7 {
				p = parts[k]
			} else {
				// Cut from the full run: RunShard's rows are checked against it for N = 7.
				p = &explore.Part{K: k, N: n, Sweep: parts[1].Sweep, Index: explore.ShardIndexes(k, n, total)}
				for _, i := range p.Index {
					p.Outcomes = append(p.Outcomes, full.Outcomes[i])
				}
			}
			for j, i := range p.Index {
				if !reflect.DeepEqual(p.Outcomes[j], full.Outcomes[i]) {
					t.Fatalf("shard %d/%d: branch %d is %s, the full run's %s", k, n, i, p.Outcomes[j].Summary(), full.Outcomes[i].Summary())
				}
			}
			var buf bytes.Buffer
			if err := p.Write(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := explore.ReadPart(&buf)
			if err != nil {
				t.Fatalf("shard %d/%d: %v", k, n, err)
			}
			got = append(got, back)
			names = append(names, fmt.Sprintf("s%d", k))
		}
		merged, _, err := explore.Merge(got, names)
		if err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		if !reflect.DeepEqual(merged, full) {
			t.Fatalf("N=%d: the merged report differs from the full run's", n)
		}
	}
}

// TestShardCommands: `explore --shard K/N --out FILE` on every shard, then
// `explore --merge`, prints and saves byte for byte what `explore` prints
// and saves, for the text, --json and --save, for several N and two
// setups (the second with ties for the shortest branch of a class broken
// across shards).
func TestShardCommands(t *testing.T) {
	for _, setup := range [][]string{{"set commit after"}, {"set commit before", "set partition.assignment.strategy cooperative-sticky"}} {
		s := base(t, setup...)
		dir := t.TempDir()
		s.Dir = dir
		sweep := fmt.Sprintf("explore --ticks %d..%d --faults crash-now,close-now,drop-commit,restart", s.World().Tick, s.World().Tick+15)
		want := exec(t, s, sweep+" --save full")
		wantJSON := exec(t, s, sweep+" --json")
		for _, n := range []int{1, 3, 4} {
			var files []string
			for k := 1; k <= n; k++ {
				f := fmt.Sprintf("shard-%d-of-%d.jsonl", k, n)
				out := exec(t, s, fmt.Sprintf("%s --shard %d/%d --out %s", sweep, k, n, f))
				if !strings.Contains(out, fmt.Sprintf("shard %d/%d", k, n)) || !strings.Contains(out, f) {
					t.Errorf("explore --shard %d/%d said %q", k, n, out)
				}
				files = append(files, f)
			}
			// Any order of the files.
			files[0], files[n-1] = files[n-1], files[0]
			saved := fmt.Sprintf("merged%d", n)
			if got := exec(t, s, "explore --merge "+strings.Join(files, " ")+" --save "+saved); got != want {
				t.Errorf("%v N=%d: explore --merge printed\n%s\nexplore printed\n%s", setup, n, got, want)
			}
			if got := exec(t, s, "explore --merge --json "+strings.Join(files, " ")); got != wantJSON {
				t.Errorf("%v N=%d: explore --merge --json differs from explore --json", setup, n)
			}
			sameDirs(t, filepath.Join(dir, "full"), filepath.Join(dir, saved))
		}
	}
}

func exec(t *testing.T, s *kernel.Session, line string) string {
	t.Helper()
	r, err := s.Exec(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return r
}

func sameDirs(t *testing.T, a, b string) {
	t.Helper()
	fa, _ := filepath.Glob(filepath.Join(a, "*"))
	fb, _ := filepath.Glob(filepath.Join(b, "*"))
	if len(fa) == 0 || len(fa) != len(fb) {
		t.Fatalf("%s has %d files, %s has %d", a, len(fa), b, len(fb))
	}
	for i := range fa {
		da, _ := os.ReadFile(fa[i])
		db, _ := os.ReadFile(fb[i])
		if filepath.Base(fa[i]) != filepath.Base(fb[i]) || !bytes.Equal(da, db) {
			t.Errorf("%s and %s differ", fa[i], fb[i])
		}
	}
}

// TestShardErrors: bad shard specs, a shard without a file, a merge of
// shards that are not every shard of one sweep, and damaged files are
// refused, each with an error saying what is wrong.
func TestShardErrors(t *testing.T) {
	s := base(t, "set commit after")
	dir := t.TempDir()
	s.Dir = dir
	from, to := s.World().Tick, s.World().Tick+3
	sweep := fmt.Sprintf("explore --ticks %d..%d", from, to)
	for k := 1; k <= 3; k++ {
		exec(t, s, fmt.Sprintf("%s --shard %d/3 --out s%d.jsonl", sweep, k, k))
	}
	exec(t, s, fmt.Sprintf("%s --shard 1/2 --out half1.jsonl", sweep))
	exec(t, s, fmt.Sprintf("explore --ticks %d..%d --shard 2/3 --out other2.jsonl", from, to+1))
	full, _ := os.ReadFile(filepath.Join(dir, "s1.jsonl"))
	lines := strings.SplitAfter(string(full), "\n")
	os.WriteFile(filepath.Join(dir, "cut.jsonl"), []byte(strings.Join(lines[:len(lines)-3], "")), 0o644)
	os.WriteFile(filepath.Join(dir, "junk.jsonl"), []byte("hello\n"), 0o644)
	for _, c := range []struct{ line, want string }{
		{sweep + " --shard 0/4 --out x", "explore --shard 0/4: K is from 1 to N (here 1 to 4)"},
		{sweep + " --shard 5/4 --out x", "explore --shard 5/4: K is from 1 to N (here 1 to 4)"},
		{sweep + " --shard 1/0 --out x", "explore --shard 1/0: N, the number of shards, is at least 1"},
		{sweep + " --shard -1/4 --out x", "K is from 1 to N"},
		{sweep + " --shard 3 --out x", `explore: --shard "3": want K/N, shard K of N (1 <= K <= N), e.g. 2/4`},
		{sweep + " --shard a/b --out x", `--shard "a/b": want K/N`},
		{sweep + " --shard 1/2/3 --out x", `--shard "1/2/3": want K/N`},
		{sweep + " --shard 1/10001 --out x", "at most 10,000 shards of an explore sweep, the N of --shard K/N"},
		{sweep + " --shard 1/2", "--shard 1/2 writes its rows to a file: add --out FILE"},
		{sweep + " --out x", "--out FILE holds the rows of a shard: add --shard K/N"},
		{sweep + " --shard 1/2 --out x --save d", "--save and --json show the whole sweep: give them to explore --merge"},
		{sweep + " --shard 1/2 --out x --json", "--save and --json show the whole sweep"},
		{"explore --merge", "--merge needs the shards' files"},
		{"explore --merge s1.jsonl s2.jsonl s3.jsonl --ticks 1..2", "--merge reads the sweep from its files: --ticks belongs to the runs of the shards"},
		{"explore --merge s1.jsonl s2.jsonl", "shards missing: 3/3 (every shard of the sweep is needed)"},
		{"explore --merge s1.jsonl s2.jsonl s3.jsonl s2.jsonl", "shard 2/3 given twice (s2.jsonl and s2.jsonl)"},
		{"explore --merge s1.jsonl half1.jsonl", "s1.jsonl is shard 1/3 and half1.jsonl is shard 1/2: the sweep was split two ways"},
		{"explore --merge s1.jsonl other2.jsonl s3.jsonl", fmt.Sprintf("s1.jsonl and other2.jsonl are shards of different sweeps: they differ in to (%d vs %d)", to, to+1)},
		{"explore --merge cut.jsonl s2.jsonl s3.jsonl", "explore --merge cut.jsonl: cut short after line"},
		{"explore --merge junk.jsonl", "explore --merge junk.jsonl: not a shard file of explore --shard"},
		{"explore --merge nothere.jsonl", "explore --merge nothere.jsonl: no such file or directory"},
		{"explore --merge " + dir, "it is a folder; explore --merge reads only shard files"},
	} {
		_, err := s.Exec(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.line, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a refused explore --shard wrote its file")
	}
}

// TestEditedShardsAreRefused: a shard file is read on another machine,
// maybe edited on the way; what a sweep cannot have written is refused by
// line, so it reaches neither the report nor the scripts --save writes
// (a class name became a file name there, and a logged line a command).
func TestEditedShardsAreRefused(t *testing.T) {
	w := base(t, "set commit before").World()
	opts := explore.Options{From: w.Tick, To: w.Tick + 4, Members: []string{"C1", "C2"}}
	part, err := explore.RunShard(w, opts, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := part.Write(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if _, err := explore.ReadPart(strings.NewReader(good)); err != nil {
		t.Fatalf("the shard as written: %v", err)
	}
	// Edit the first row that holds old (or the header, line 1).
	edit := func(line int, old, new string) string {
		lines := strings.Split(good, "\n")
		for i := line; i < len(lines); i++ {
			if strings.Contains(lines[i], old) {
				lines[i] = strings.Replace(lines[i], old, new, 1)
				return strings.Join(lines, "\n")
			}
		}
		t.Fatalf("no line from %d holds %s", line+1, old)
		return ""
	}
	for _, c := range []struct{ name, file, want string }{
		{"a class that is a path", edit(1, `"classes":{"`, `"classes":{"../../x":1,"`), `class "../../x" counted 1`},
		{"a negative count", edit(1, `"classes":{"`, `"classes":{"stalled":-3,"`), `class "stalled" counted -3`},
		{"a fault kind out of order", edit(1, `"fault":"crash-now"`, `"fault":"nuke"`), `fault "nuke", where the sweep's order puts "crash-now"`},
		{"a member out of order", edit(1, `"member":"C1"`, `"member":"C2"`), "where the sweep's order puts C1"},
		{"a tick out of the window", edit(1, fmt.Sprintf(`"tick":%d`, w.Tick), `"tick":999999`), "outside the window"},
		{"a logged command", edit(1, `"log":["step `, `"log":["save /tmp/x","step `), `logged "save /tmp/x"`},
		{"ticks against the log", edit(1, `"ticks":`, `"ticks":1`), "its logged steps add up to"},
		{"a guarantee", edit(0, `"guarantee":"at-most-once"`, `"guarantee":"never"`), `guarantee "never"`},
		{"an output topic with a line end", edit(0, `"output":"invoices"`, `"output":"invoices\nsave x"`), "is not a topic name"},
		{"a fault list", edit(0, `"faults":["crash-now",`, `"faults":["crash-now","crash-now",`), "each one of"},
		{"an older kgrepl's shard", edit(0, `"kgrepl explore shard v3"`, `"kgrepl explore shard v1"`), "run its shard again with this one"},
		{"a v2 shard, without its world's partitions", edit(0, `"kgrepl explore shard v3"`, `"kgrepl explore shard v2"`), "without its world's partitions"},
		{"a world of one partition", edit(0, fmt.Sprintf(`"partitions":%d`, part.Sweep.Partitions), `"partitions":1`), "a world has at least 2"},
		{"a cause missing", edit(1, `"unavailable":[`, `"unavailable":[7,`), "counts of unavailability, want one per cause"},
		{"a negative unavailability", edit(1, `"unavailable":[0,`, `"unavailable":[-1,`), "unavailability -1: not a count"},
		{"a health with a line end", edit(1, `"health":"`, `"health":"ok\nsave x`), "is not what a branch ends with"},
	} {
		_, err := explore.ReadPart(strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestMergeAndSaveRefuseWhatTheyCannotTrust: the script a shard carries is
// checked like a session file (world inputs only) before it starts any
// counterexample; a --save that cannot write one of its files writes none;
// a fault kind or member listed twice is refused rather than run twice.
func TestMergeAndSaveRefuseWhatTheyCannotTrust(t *testing.T) {
	s := base(t, "set commit before")
	dir := t.TempDir()
	s.Dir = dir
	window := fmt.Sprintf("--ticks %d..%d", s.World().Tick, s.World().Tick+3)
	exec(t, s, "explore "+window+" --shard 1/1 --out good.jsonl")
	data, err := os.ReadFile(filepath.Join(dir, "good.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), `"prefix":"`, `"prefix":"save pwned.kg\n`, 1)
	if err := os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = s.Exec("explore --merge bad.jsonl --save cex")
	if err == nil || !strings.Contains(err.Error(), `the shards' script, line 1: "save" is not a world input`) {
		t.Errorf("a shard whose script saves a file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cex")); err == nil {
		t.Error("the refused merge made its --save folder")
	}

	// One of the files --save writes is a folder: none is written.
	out := exec(t, s, "explore "+window)
	if !strings.Contains(out, "lost-write") {
		t.Fatalf("the sweep finds no lost write to save:\n%s", out)
	}
	if err := os.MkdirAll(filepath.Join(dir, "partial", "lost-write.kg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec("explore " + window + " --save partial"); err == nil || !strings.Contains(err.Error(), "lost-write.kg: it is a folder") {
		t.Errorf("--save onto a folder: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "partial", "*.kg")); len(files) != 1 {
		t.Errorf("a refused --save wrote %v", files)
	}

	for line, want := range map[string]string{
		"explore --faults crash-after,crash-after": "explore --faults crash-after,crash-after: crash-after is listed twice",
		"explore --members C1,C2,C1":               "explore --members C1,C2,C1: C1 is listed twice",
	} {
		if _, err := s.Exec(line); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}
