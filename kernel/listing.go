package kernel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Listing views (offsets, log, trace, consume, txn, metrics' rows per
// rebalance, describe group) list what a world has kept, and a world keeps
// a lot: auto-commit writes six offset records every five ticks, so three
// `step 1000000` on the default world leave 3,600,000 of them. Each such
// view counts its rows before it makes any, refuses more than
// limitViewRows (limitTraceRows for trace) naming the bound and how to
// narrow the view, makes each row from the world's compact records as it
// writes it (never a list of every record first), and looks for Ctrl-C
// and the heap guard as it goes. A long one is streamed (render): its
// rows are made twice, once to measure the columns and the text, once to
// write it into a buffer of that size, and never kept, so it holds its
// text alone; and its text is bounded too (limitViewBytes) before it is
// written.
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

// listArgs reads a listing view's words: its options (valued take a
// value, bare do not), from min to max positional words, and its --from
// and --last window (parseWindow), refusing the first that is wrong in
// that order.
func listArgs(cmd string, args, valued, bare []string, min, max int, fromWhat string) ([]string, map[string]string, listWindow, error) {
	pos, fl, err := flags(cmd, args, valued, bare)
	if err != nil {
		return nil, nil, listWindow{}, err
	}
	if err := needArgs(cmd, pos, min, max); err != nil {
		return nil, nil, listWindow{}, err
	}
	lw, err := parseWindow(cmd, fl, fromWhat)
	return pos, fl, lw, err
}

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

// tableRows is the most rows a listing view returns as a Table too (a
// notebook shows it as HTML); a longer view is its text alone.
var tableRows = 10_000

// render writes a listing view's table, as Table.Text writes it. rows
// gives the cells of each row, in order, to emit, and stops at emit's
// error. Up to tableRows rows it makes the Table; past it the rows are
// made twice and never kept: once to measure the columns and the text
// (textSize; refused past limitViewBytes), once to write the text into a
// buffer of that size. Both look for Ctrl-C every pollEvery rows.
func (s *Session) render(cmd string, n int, header []string, rows func(emit func(cells ...string) error) error) (string, *Table, error) {
	i := 0
	poll := func() error {
		err := s.pollRow(cmd, i)
		i++
		return err
	}
	if n <= tableRows {
		t := &Table{Header: header, Rows: make([][]string, 0, n)}
		if err := rows(func(cells ...string) error {
			if err := poll(); err != nil {
				return err
			}
			t.Add(cells...)
			return nil
		}); err != nil {
			return "", nil, err
		}
		return t.Text(), t, nil
	}
	widths := make([]int, len(header))
	measureRow(widths, header)
	ts := newTextSize(len(header))
	ts.add(header)
	if err := rows(func(cells ...string) error {
		if err := poll(); err != nil {
			return err
		}
		measureRow(widths, cells)
		ts.add(cells)
		return nil
	}); err != nil {
		return "", nil, err
	}
	size := ts.total(widths)
	if err := limitViewBytes.check(cmd, size); err != nil {
		return "", nil, fmt.Errorf("%w: its text would be %s bytes (--last N or --from narrow it)", err, group(size))
	}
	var b strings.Builder
	b.Grow(size)
	line := writeRow(&b, nil, header, widths)
	i = 0
	if err := rows(func(cells ...string) error {
		if err := poll(); err != nil {
			return err
		}
		line = writeRow(&b, line, cells, widths)
		return nil
	}); err != nil {
		return "", nil, err
	}
	return b.String(), nil, nil
}

// htmlOf is a view's table for a notebook, when it has one and the
// command's results are read whole (ExecResults): Exec reads their text
// alone, and a long table's HTML cost as much to write as its text.
func (s *Session) htmlOf(t *Table) string {
	if t == nil || s.textOnly {
		return ""
	}
	return t.HTML()
}

// jsonList writes a JSON array of the items each gives (marshalled one by
// one, as json.Marshal writes them inside a list), stopping past
// limitViewBytes and at Ctrl-C: a view's JSON is not built as a list of
// values first.
func (s *Session) jsonList(cmd string, b *strings.Builder, each func(emit func(v any) error) error) error {
	b.WriteByte('[')
	i := 0
	err := each(func(v any) error {
		if err := s.pollRow(cmd, i); err != nil {
			return err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		i++
		j, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(j)
		if b.Len() > limitViewBytes.max {
			return fmt.Errorf("%s: its JSON passes %s bytes, over the limit (%s; --last N or --from narrow it)", cmd, group(limitViewBytes.max), limitViewBytes.helpLine())
		}
		return nil
	})
	b.WriteByte(']')
	return err
}
