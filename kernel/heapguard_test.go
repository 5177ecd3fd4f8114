package kernel

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// fakeRoot lays out a file system root with the given files.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestCgroupLimit reads the memory limit of the process's cgroup, the
// smallest on the path to the root, under cgroup v2 and v1.
func TestCgroupLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  uint64
	}{
		{"v2, a limit on the process's cgroup", map[string]string{
			"proc/self/cgroup": "0::/user.slice/app.scope\n",
			"sys/fs/cgroup/user.slice/app.scope/memory.max": "2147483648\n",
			"sys/fs/cgroup/user.slice/memory.max":           "max\n",
		}, 2 << 30},
		{"v2, a smaller limit above it", map[string]string{
			"proc/self/cgroup": "0::/user.slice/app.scope\n",
			"sys/fs/cgroup/user.slice/app.scope/memory.max": "max\n",
			"sys/fs/cgroup/user.slice/memory.max":           "1073741824\n",
		}, 1 << 30},
		{"v2 in a container: its cgroup mounted as the root", map[string]string{
			"proc/self/cgroup":         "0::/kubepods/pod1/c1\n",
			"sys/fs/cgroup/memory.max": "536870912\n",
		}, 512 << 20},
		{"v2, no limit", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, 0},
		{"v1, the memory controller's limit", map[string]string{
			"proc/self/cgroup": "12:pids:/x\n4:memory:/process_api/abc\n0::/\n",
			"sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "3221225472\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":                 "9223372036854771712\n",
		}, 3 << 30},
		{"v1, unlimited (a number near 2^63)", map[string]string{
			"proc/self/cgroup": "4:cpu,memory:/a\n",
			"sys/fs/cgroup/memory/a/memory.limit_in_bytes": "9223372036854771712\n",
		}, 0},
		{"hybrid: v1 memory and the v2 unified mount, the smaller", map[string]string{
			"proc/self/cgroup": "4:memory:/a\n0::/a\n",
			"sys/fs/cgroup/memory/a/memory.limit_in_bytes": "3221225472\n",
			"sys/fs/cgroup/unified/a/memory.max":           "2147483648\n",
		}, 2 << 30},
		{"no /proc", map[string]string{}, 0},
	} {
		if got := cgroupLimit(fakeRoot(t, c.files)); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// TestHeapThreshold: the guard's threshold is half of the smallest bound
// on the process (less runtimeReserve), whichever it is; an address-space
// limit counts what the process has mapped already.
func TestHeapThreshold(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		m       memoryLimits
		want    int
		because string
	}{
		{memoryLimits{physical: 24 * gib}, (24*gib - runtimeReserve) / 2, "physical memory"},
		{memoryLimits{physical: 24 * gib, cgroup: 4 * gib}, (4*gib - runtimeReserve) / 2, "the cgroup's memory limit"},
		{memoryLimits{physical: 24 * gib, cgroup: 4 * gib, addrSpace: 1 * gib}, (1*gib - runtimeReserve) / 2, "RLIMIT_AS"},
		{memoryLimits{physical: 2 * gib, cgroup: 4 * gib, addrSpace: 3 * gib}, (2*gib - runtimeReserve) / 2, "physical memory"},
		{memoryLimits{physical: 256 << 20}, 64 << 20, "physical memory"},
		{memoryLimits{}, 12 * gib, ""},
	} {
		_, why := c.m.budget()
		if got := heapThreshold(c.m); got != c.want || why != c.because {
			t.Errorf("%+v: threshold %d (%s), want %d (%s)", c.m, got, why, c.want, c.because)
		}
	}
	if got := addressSpaceLeft(^uint64(0), 1<<30); got != 0 {
		t.Errorf("RLIMIT_AS unlimited: %d left, want 0 (no bound)", got)
	}
	if got := addressSpaceLeft(4<<30, 1<<30); got != 3<<30 {
		t.Errorf("RLIMIT_AS 4 GiB with 1 GiB mapped: %d left, want 3 GiB", got)
	}
	if got := addressSpaceLeft(1<<30, 2<<30); got != 1 {
		t.Errorf("RLIMIT_AS below what is mapped: %d left, want 1", got)
	}
	if got := mappedBytes(fakeRoot(t, map[string]string{"proc/self/statm": "1000 20 3 4 0 5 0\n"})); got != 1000*uint64(os.Getpagesize()) {
		t.Errorf("statm of 1000 pages: %d bytes", got)
	}
}

// TestCollectorWorksBeforeTheGuard: a session sets the Go collector's
// memory limit under the guard's threshold, so it collects harder as the
// heap nears the threshold rather than letting garbage reach it; a limit
// the user set with GOMEMLIMIT is kept.
func TestCollectorWorksBeforeTheGuard(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: the user's limit is kept")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	setMemoryBudget() // what the first NewSession does
	got := debug.SetMemoryLimit(-1)
	if want := gcMemoryLimit(limitHeap.max); got != want || want >= int64(limitHeap.max) {
		t.Errorf("the collector's memory limit is %d, want %d (under the guard's %d)", got, want, limitHeap.max)
	}
}

// TestViewsHaveRoomWhereStepsStop: a command that makes the world bigger
// (step, run, load) is stopped at three quarters of the heap limit, so
// the world it leaves can still be looked at: with the heap between the
// two, a step is stopped and every view runs.
func TestViewsHaveRoomWhereStepsStop(t *testing.T) {
	defer func(l limit) { limitHeap = l }(limitHeap)
	s := NewSession()
	runLines(t, s, "join C2\nrun until stable\nstep 200")
	ballast := make([]byte, 256<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	runtime.GC()
	h := heapBytes()
	limitHeap.max = int(h + h/6) // three quarters of it is below the heap now
	_, err := s.Exec("step 1000000")
	if err == nil || !strings.Contains(err.Error(), "it was stopped at the heap limit") || !strings.Contains(err.Error(), "a step, run or load stops at three quarters of it") {
		t.Fatalf("a step over three quarters of the heap limit: %v", err)
	}
	for _, v := range []string{"describe group", "describe group --json", "offsets", "trace", "trace --events", "consume invoices", "metrics --json", "txn", "log orders-0", "members"} {
		if _, err := s.Exec(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	runtime.KeepAlive(ballast)
}
