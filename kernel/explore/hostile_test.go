package explore_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/explore"
)

// shardFile is shard 1/1 of a small sweep, as explore --shard writes it.
func shardFile(t *testing.T) string {
	t.Helper()
	w := base(t, "set commit before").World()
	part, err := explore.RunShard(w, explore.Options{From: w.Tick, To: w.Tick + 2, Members: []string{"C1", "C2"}, Faults: []string{"crash-now"}}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	part.Sweep.Prefix = "new\njoin C2\nstep 14\n"
	var buf bytes.Buffer
	if err := part.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// withHeaderField replaces a field of a shard file's sweep (its JSON).
func withHeaderField(t *testing.T, file, field string, value any) string {
	t.Helper()
	first, rest, _ := strings.Cut(file, "\n")
	var top, sweep map[string]json.RawMessage
	if err := json.Unmarshal([]byte(first), &top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(top["sweep"], &sweep); err != nil {
		t.Fatal(err)
	}
	v, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	sweep[field] = v
	sw, _ := json.Marshal(sweep)
	top["sweep"] = sw
	line, _ := json.Marshal(top)
	return string(line) + "\n" + rest
}

// finishes runs f and fails the test if it has not returned within d: a
// hang detector (the figures come from benchmarks), its deadline far
// past what the work takes on a loaded machine.
func finishes(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: not done after %v", what, d)
	}
}

// TestMergeChecksMembersInLinearTime: a shard header may list 999,999
// members; each was checked against all before it (60,000 took 3.4 s,
// 999,999 hung). Now one pass, and the error quotes a few of them.
func TestMergeChecksMembersInLinearTime(t *testing.T) {
	good := shardFile(t)
	many := make([]string, 999_999)
	for i := range many {
		many[i] = fmt.Sprintf("C%d", i+1)
	}
	var err error
	file := withHeaderField(t, good, "members", many)
	finishes(t, 60*time.Second, "999,999 distinct members", func() {
		_, err = explore.ReadPart(strings.NewReader(file))
	})
	if err == nil || !strings.Contains(err.Error(), "the sweep counts 6 branches; its window, members and fault kinds make 2999997") {
		t.Errorf("999,999 members in a sweep of 6 branches: %v", err)
	}
	many[len(many)-1] = "C7"
	file = withHeaderField(t, good, "members", many)
	finishes(t, 60*time.Second, "999,999 members, one twice", func() {
		_, err = explore.ReadPart(strings.NewReader(file))
	})
	if err == nil || !strings.Contains(err.Error(), `the sweep's members ["C1" "C2" "C3" "C4" "C5" "C6" "C7" "C8"]... (999999 in all): each a client id (C1 to C999999), once`) {
		t.Errorf("a member listed twice: %.300v", err)
	}
}

// TestMergeOfAHugeScriptAllocatesLittle: the script a shard carries may be
// most of a 256 MiB file. explore --merge decoded it, marshalled each
// sweep again to compare them, split it into lines and checked them, a
// copy each: 2.4 GB for a 267 MB file, which ran out of memory. Now the
// file is read once into a buffer of its size, decoded in place, and the
// sweeps and lines compared in place: what merging two such shards
// allocates stays within a small multiple of the files.
func TestMergeOfAHugeScriptAllocatesLittle(t *testing.T) {
	if raceDetector {
		// 3.0x under -race against 2.0x without, all of it in
		// encoding/json's Marshal and bytes.Buffer's growth.
		t.Skip("allocation counts mean nothing under -race (race_on_test.go)")
	}
	s := base(t, "set commit before")
	dir := t.TempDir()
	s.Dir = dir
	window := fmt.Sprintf("--ticks %d..%d --faults crash-now", s.World().Tick, s.World().Tick+1)
	exec(t, s, "explore "+window+" --shard 1/2 --out a.jsonl")
	exec(t, s, "explore "+window+" --shard 2/2 --out b.jsonl")
	script := strings.Repeat("step 1\n", 2_400_000) // 16.8 MB of short lines, the costliest to split
	size := 0
	for _, f := range []string{"a.jsonl", "b.jsonl"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		big := withHeaderField(t, string(data), "prefix", script)
		size += len(big)
		if err := os.WriteFile(filepath.Join(dir, f), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	out := exec(t, s, "explore --merge a.jsonl b.jsonl")
	runtime.ReadMemStats(&m1)
	if !strings.Contains(out, "branches") {
		t.Fatalf("the merge printed %q", out)
	}
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("merging %d bytes of shard files allocated %d bytes (%.1fx)", size, alloc, float64(alloc)/float64(size))
	if alloc > uint64(5*size/2) {
		t.Errorf("merging %d bytes of shard files allocated %d bytes (%.1fx), want at most 2.5x", size, alloc, float64(alloc)/float64(size))
	}
}

// TestMergeRefusesStepsThatOverflow: a row whose logged steps add up to
// its ticks only by overflowing an int was merged, and --save wrote
// `step 9223372036854775807`, a script kgrepl refuses.
func TestMergeRefusesStepsThatOverflow(t *testing.T) {
	good := shardFile(t)
	lines := strings.Split(good, "\n")
	var row map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &row); err != nil {
		t.Fatal(err)
	}
	ran := int(row["ticks"].(float64))
	// 2 x (2^63-1) + ran + 2 = 2^64 + ran: ran, once the sum wraps.
	row["log"] = []string{"step 9223372036854775807", "step 9223372036854775807", fmt.Sprintf("step %d", ran+2)}
	b, _ := json.Marshal(row)
	lines[1] = string(b)
	_, err := explore.ReadPart(strings.NewReader(strings.Join(lines, "\n")))
	if want := fmt.Sprintf("line 2: branch 0: its logged steps add up to more than the %d ticks its row says it ran", ran); err == nil || err.Error() != want {
		t.Errorf("steps that overflow to the row's ticks: %v, want %s", err, want)
	}
}

// TestShardOfABigWorldReadsBack: a shard of a world past 1,000 partitions
// reads back. A crash there leaves more than 1,000 partitions unavailable
// a tick, which a bound fixed at 1,000 partitions (the kernel's limit
// before issue 26) refused as "not a count of partition x ticks".
func TestShardOfABigWorldReadsBack(t *testing.T) {
	s := kernel.NewSession()
	for _, l := range []string{"new --topics orders:3000", "join C2", "run until stable"} {
		if _, err := s.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	w := s.World()
	part, err := explore.RunShard(w, explore.Options{From: w.Tick, To: w.Tick, Members: []string{"C1"}, Faults: []string{"crash-now"}, Bound: 20}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, o := range part.Outcomes {
		for _, n := range o.Unavailable {
			most = max(most, n/(o.Ran+1))
		}
	}
	if most <= 1000 {
		t.Fatalf("the crash's branch left at most %d partitions unavailable a tick; the test needs more than 1,000", most)
	}
	var buf bytes.Buffer
	if err := part.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := explore.ParsePart(buf.Bytes())
	if err != nil {
		t.Fatalf("a shard of a 3,001-partition world does not read back: %v", err)
	}
	if back.Sweep.Partitions != 3001 {
		t.Fatalf("the sweep's partitions read back as %d, want 3,001", back.Sweep.Partitions)
	}
	// A count past what the world's partitions could be unavailable is
	// still refused.
	over := 3002 * (part.Outcomes[0].Ran + 1)
	text := regexp.MustCompile(`"unavailable":\[[0-9]+`).ReplaceAllString(buf.String(), fmt.Sprintf(`"unavailable":[%d`, over))
	if _, err := explore.ParsePart([]byte(text)); err == nil || !strings.Contains(err.Error(), "not a count of partition x ticks") {
		t.Fatalf("an unavailability past 3,001 partitions x its ticks: %v", err)
	}
}
