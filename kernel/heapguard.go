package kernel

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The heap guard. The limits (limits.go) bound what a command may ask for
// before it starts: ticks, members, partitions, records, branches,
// samples, cells, rows. What a tick costs is not bounded by them: a world
// of 1,000 members that all time out and rejoin every few ticks keeps
// about 430 KB a tick, so a step inside the step limit could ask for
// hundreds of gigabytes. So while a command runs, a watcher reads the
// heap's size every heapGuardEvery and, past limitHeap, stops the command
// the way Ctrl-C does: it fails, and the session is as it was before it
// (the world it grew is dropped).
//
// The threshold comes from what this process may really use (its memory
// budget, readMemoryLimits): the smallest of its cgroup's memory limit,
// its address-space limit (RLIMIT_AS, less the address space it holds
// when it starts) and the machine's physical memory. The guard stops a
// command when its live heap, as the last collection marked it, passes
// half of that less runtimeReserve: the process's resident memory is that
// plus the runtime's own (spans, stacks, garbage between collections),
// and its address space more again. Commands that make the world bigger
// are stopped at three quarters of it (growThreshold). Before that, the
// Go collector is told to keep the whole runtime under 90% of those three
// quarters (debug.SetMemoryLimit), so it collects harder as the heap
// nears them; and when garbage takes the heap's objects past the limit
// the guard asks for a collection, at most once a second. On this
// project's 24 GiB machine the threshold is about 12 GiB, as it was when
// it was fixed.
var limitHeap = limit{"bytes of heap while a command runs", heapThreshold(readMemoryLimits("/"))}

const heapGuardEvery = 20 * time.Millisecond

// budgetOnce sets the collector's memory limit at the first session.
var budgetOnce sync.Once

// setMemoryBudget tells the Go collector to keep the runtime's memory
// under 90% of where the guard stops a step (growThreshold), unless
// GOMEMLIMIT already set a limit (the user's word wins).
func setMemoryBudget() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(gcMemoryLimit(limitHeap.max))
}

// gcMemoryLimit is the collector's soft limit for a guard threshold: 90%
// of three quarters of it.
func gcMemoryLimit(threshold int) int64 { return int64(threshold) / 4 * 3 / 10 * 9 }

// memoryLimits are the bounds on what this process may use, each 0 when
// there is none.
type memoryLimits struct {
	cgroup    uint64 // the smallest memory limit of its cgroup and the cgroups above it
	addrSpace uint64 // RLIMIT_AS less the address space mapped when the limits were read
	physical  uint64 // the machine's memory
}

// budget is the smallest of the limits, and which one it is.
func (m memoryLimits) budget() (uint64, string) {
	best, why := uint64(0), ""
	for _, c := range []struct {
		v    uint64
		name string
	}{{m.physical, "physical memory"}, {m.cgroup, "the cgroup's memory limit"}, {m.addrSpace, "RLIMIT_AS"}} {
		if c.v > 0 && (best == 0 || c.v < best) {
			best, why = c.v, c.name
		}
	}
	return best, why
}

// heapThreshold is the guard's threshold for a process bounded by m: half
// of its budget less runtimeReserve. With no bound known at all (no
// /proc, no sysinfo), 12 GiB.
func heapThreshold(m memoryLimits) int {
	b, _ := m.budget()
	if b == 0 {
		return 12 << 30
	}
	reserve := min(runtimeReserve, b/2)
	return int(min((b-reserve)/2, 1<<62))
}

// runtimeReserve is what the process needs beside its Go heap, taken off
// its budget before the threshold is halved: thread stacks (8 MiB of
// address space a thread in a cgo binary), the runtime's own structures,
// and the 64 MiB steps the heap's address space grows by. Under an
// address-space limit of 1 GiB more than kgrepl maps when it starts, half
// the budget without it let the heap grow until an allocation failed.
const runtimeReserve = 256 << 20

// readMemoryLimits reads this process's memory limits; root is where the
// file system starts ("/", or a folder laid out like it in tests).
func readMemoryLimits(root string) memoryLimits {
	var m memoryLimits
	m.cgroup = cgroupLimit(root)
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil {
		m.addrSpace = addressSpaceLeft(rl.Cur, mappedBytes(root))
	}
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err == nil {
		m.physical = uint64(si.Totalram) * uint64(si.Unit)
	}
	return m
}

// addressSpaceLeft is what an address-space limit leaves the process
// beyond what it has mapped already (binary, runtime reservations,
// stacks); 0 when there is no limit.
func addressSpaceLeft(limit, mapped uint64) uint64 {
	const infinity = ^uint64(0) // RLIM_INFINITY
	if limit == infinity || limit == 0 {
		return 0
	}
	if mapped >= limit {
		return 1 // nothing left: every command is stopped at once
	}
	return limit - mapped
}

// mappedBytes is the process's address space now (the first field of
// /proc/self/statm, in pages); 0 when it cannot be read.
func mappedBytes(root string) uint64 {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/statm"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pages, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// cgroupLimit is the smallest memory limit on the way from this process's
// cgroup up to the root, under cgroup v2 (memory.max) and v1
// (memory.limit_in_bytes of the memory controller), whichever the machine
// mounts; 0 when none is set. A cgroup's limit bounds every cgroup under
// it, so the smallest on the path is the one that bites. In a container
// the path /proc/self/cgroup names may not exist under /sys/fs/cgroup (the
// container's cgroup is mounted there as the root): missing levels are
// skipped.
func cgroupLimit(root string) uint64 {
	f, err := os.Open(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0
	}
	defer f.Close()
	best := uint64(0)
	take := func(v uint64) {
		if v > 0 && (best == 0 || v < best) {
			best = v
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			take(cgroupPathLimit(filepath.Join(root, "sys/fs/cgroup"), parts[2], "memory.max"))
			take(cgroupPathLimit(filepath.Join(root, "sys/fs/cgroup/unified"), parts[2], "memory.max"))
		case hasController(parts[1], "memory"):
			take(cgroupPathLimit(filepath.Join(root, "sys/fs/cgroup/memory"), parts[2], "memory.limit_in_bytes"))
		}
	}
	return best
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// cgroupPathLimit is the smallest limit in file at path and each folder
// above it, inside the mount; 0 when none is set ("max", or v1's
// unlimited, a number near 2^63).
func cgroupPathLimit(mount, path, file string) uint64 {
	best := uint64(0)
	p := filepath.Clean("/" + path)
	for {
		b, err := os.ReadFile(filepath.Join(mount, p, file))
		if err == nil {
			s := strings.TrimSpace(string(b))
			if v, err := strconv.ParseUint(s, 10, 64); err == nil && v < 1<<62 && v > 0 && (best == 0 || v < best) {
				best = v
			}
		}
		if p == "/" {
			return best
		}
		p = filepath.Dir(p)
	}
}

// heapBytes reads the heap's objects, live or not yet collected.
func heapBytes() uint64 { return readMetric("/memory/classes/heap/objects:bytes") }

// liveHeapBytes reads the heap the last collection found live.
func liveHeapBytes() uint64 { return readMetric("/gc/heap/live:bytes") }

func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// guardHeap watches the heap while a line runs and interrupts it past
// limitHeap. The function it returns ends the watch and, when the watcher
// stopped the line, turns its error (ErrInterrupted) into one that says
// why.
func (s *Session) guardHeap() (end func(err error) error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var tripped bool // written by the watcher, read after wg.Wait
	wg.Add(1)
	var trippedGrowing bool
	var lastForced time.Time
	go func() {
		defer wg.Done()
		t := time.NewTicker(heapGuardEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				growing := s.interrupt.growing.Load()
				limit := uint64(limitHeap.max)
				if growing {
					limit = growThreshold()
				}
				// What stops a command is its live heap, as the last
				// collection marked it: the heap's objects count garbage
				// not yet collected too (a world a stopped command left, a
				// view's rows). When they pass the limit while the live
				// heap does not, a collection is asked for, at most once
				// a second (forced every 20 ms, collections of a heap of
				// gigabytes left a step near the limit no time to run).
				live, objects := liveHeapBytes(), heapBytes()
				if live > limit {
					tripped, trippedGrowing = true, growing
					s.interrupt.Store(true)
					return
				}
				if objects > limit && time.Since(lastForced) > time.Second {
					runtime.GC()
					lastForced = time.Now()
				}
			}
		}
	}()
	return func(err error) error {
		close(done)
		wg.Wait()
		if !tripped {
			return err
		}
		// What the stopped command grew is garbage now (its world was put
		// back): collect it before the next command, which the guard,
		// counting garbage not yet collected, would stop at once.
		runtime.GC()
		if err == nil {
			return err
		}
		if errors.Is(err, ErrInterrupted) {
			why := limitHeap.helpLine()
			if trippedGrowing {
				why += fmt.Sprintf("; a step, run or load stops at three quarters of it, %s bytes, so that the world it leaves can still be viewed", group(int(growThreshold())))
			}
			return fmt.Errorf("%w; it was stopped at the heap limit (%s)", err, why)
		}
		return err
	}
}

// growThreshold is where the guard stops a command that makes the world
// bigger (step, run, load): three quarters of limitHeap. A world can grow
// only that far, and a quarter of the threshold is left for looking at
// it: a listing view at its bound (limitViewRows) builds about 0.5 GB,
// well inside a quarter of the 12 GiB threshold of this project's
// machine; with less room a view past it is stopped at the heap limit
// like any command, and a narrower one (--last, --from) fits.
func growThreshold() uint64 { return uint64(limitHeap.max) / 4 * 3 }
