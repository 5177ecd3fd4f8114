package kernel

import (
	"fmt"
	"sort"
)

// Listing views (offsets, log, trace, consume, txn, metrics' rows per
// rebalance, describe group) list what a world has kept, and a world keeps
// a lot: auto-commit writes six offset records every five ticks, so three
// `step 1000000` on the default world leave 3,600,000 of them. Each such
// view counts its rows before it makes any, refuses more than
// limitViewRows (limitTraceRows for trace) naming the bound and how to
// narrow the view, makes each row from the world's compact records as it
// writes it (never a list of every record first), and looks for Ctrl-C
// and the heap guard as it goes.
//
// --from and --last narrow a view: --from starts it at a tick (offsets,
// trace, metrics: the rows are in time order) or at an offset (log,
// consume: the rows are a partition's offsets), and --last N keeps the
// last N rows of what is left.

// listWindow is what --from and --last ask of a listing.
type listWindow struct {
	from    int // a tick or an offset, as the view reads it
	hasFrom bool
	last    int // 0: every row
}

// listFlags are the options of a listing view that takes both.
var listFlags = []string{"--from", "--last"}

// parseWindow reads --from and --last from a view's flags; fromWhat names
// what --from takes (TICK or OFFSET) in errors.
func parseWindow(cmd string, fl map[string]string, fromWhat string) (listWindow, error) {
	var lw listWindow
	if v, ok := fl["--from"]; ok {
		n, err := parseAtLeast(cmd, "--from "+fromWhat, v, 0, limitClock)
		if err != nil {
			return lw, err
		}
		lw.from, lw.hasFrom = n, true
	}
	if v, ok := fl["--last"]; ok {
		n, err := parseAtLeast(cmd, "--last N", v, 1, limitViewRows)
		if err != nil {
			return lw, err
		}
		lw.last = n
	}
	return lw, nil
}

// rows cuts a listing of n rows in order: from its first row at or past
// --from (first(from) says which that is; the rows are sorted by what
// --from names) to its end, then the last --last of those.
func (lw listWindow) rows(n int, first func(from int) int) (lo, hi int) {
	lo, hi = 0, n
	if lw.hasFrom {
		lo = first(lw.from)
	}
	if lw.last > 0 && hi-lo > lw.last {
		lo = hi - lw.last
	}
	return lo, hi
}

// firstAtOrAfter is the first of n rows whose key (nondecreasing) is at
// least v: a binary search, so a view from a late tick reads no row before it.
func firstAtOrAfter(n, v int, key func(i int) int) int {
	return sort.Search(n, func(i int) bool { return key(i) >= v })
}

// checkRows refuses a listing of more rows than limitViewRows before any
// is made; what counts them as the view names them ("records of
// __consumer_offsets") and narrow says how to ask for fewer.
func checkRows(cmd string, n int, what, narrow string) error {
	return limitViewRows.checkf(cmd, n, fmt.Sprintf("%d %s (%s)", n, what, narrow))
}

// pollEvery is how many rows a listing makes between two looks for Ctrl-C.
const pollEvery = 4096

// pollRow reports Ctrl-C (or the heap guard's stop) every pollEvery rows,
// as the error the command fails with; row 0 looks too.
func (s *Session) pollRow(cmd string, i int) error {
	if i%pollEvery == 0 && s.stopRequested() {
		return interrupted(cmd)
	}
	return nil
}
