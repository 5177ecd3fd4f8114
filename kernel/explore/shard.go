package explore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// A sweep outgrows one machine by its branches: each is independent of the
// others once the world at its tick is known, and every machine can make
// that world itself from the same script. So a sweep splits into N shards:
// every machine builds the same branch list (the script, then the window's
// ticks x members x fault kinds, in Run's order), shard K runs the branches
// whose index i has i mod N = K-1, and writes their outcomes, each with its
// index, to one file. Merge puts the files' rows back in index order and
// tallies them as Run does, so the merged report is the single-machine
// report: the same counts, and the same shortest branch per class, since
// "shortest" breaks ties by index over the whole list, never within a shard.
//
// Round-robin, not contiguous blocks: a branch's cost depends on its tick
// (late ticks in a window catch a rebalance, early ones do not), so blocks
// would give one machine all the long branches; with rows tagged by index,
// merging round-robin shards is as simple as merging blocks.

// Sweep is what every shard of one sweep shares: the world it starts from
// and the branches it runs. Merge refuses files whose sweeps differ.
type Sweep struct {
	// Prefix is the script that makes the base world (the caller's: Run
	// does not know it); the counterexample scripts start with it.
	Prefix    string    `json:"prefix"`
	Base      int       `json:"base"`
	From      int       `json:"from"`
	To        int       `json:"to"`
	Faults    []string  `json:"faults"`
	Members   []string  `json:"members"` // as given; null = every member live at each tick
	Bound     int       `json:"bound"`
	Isolation string    `json:"isolation"`
	Guarantee Guarantee `json:"guarantee"`
	Output    string    `json:"output"`
	// Partitions is the base world's partitions, input and output: what
	// bounds a branch's unavailability counts (partition x ticks).
	Partitions int   `json:"partitions"`
	Stops      []int `json:"stops"`
	Branches   int   `json:"branches"` // in the whole sweep
}

func (p *plan) sweep() Sweep {
	return Sweep{Base: p.base.Tick, From: p.opts.From, To: p.opts.To, Faults: p.kinds, Members: p.opts.Members,
		Bound: p.opts.Bound, Isolation: p.opts.Isolation, Guarantee: GuaranteeOf(p.base, p.opts.Isolation),
		Output: p.base.Topo.Output.Name, Partitions: len(p.base.Layout().Inputs()) + len(p.base.Layout().Outputs()),
		Stops: p.stops, Branches: len(p.jobs)}
}

// Part is one shard's rows: Outcomes[j] is branch Index[j] of the sweep.
type Part struct {
	K, N     int
	Sweep    Sweep
	Index    []int
	Outcomes []Outcome
}

// CheckShard refuses a shard that is not K of N with 1 <= K <= N.
func CheckShard(k, n int) error {
	if n < 1 {
		return fmt.Errorf("shard %d/%d: N, the number of shards, is at least 1", k, n)
	}
	if k < 1 || k > n {
		return fmt.Errorf("shard %d/%d: K is from 1 to N (here 1 to %d)", k, n, n)
	}
	return nil
}

// ShardIndexes are the branches of a sweep of total branches that shard K
// of N runs: every index i with i mod N = K-1, in order.
func ShardIndexes(k, n, total int) []int {
	var idx []int
	for i := k - 1; i < total; i += n {
		idx = append(idx, i)
	}
	return idx
}

// isShard reports whether idx is exactly the indexes of shard K of N of a
// sweep of total branches (without building them: total comes from a file).
func isShard(idx []int, k, n, total int) bool {
	want := 0
	if total >= k {
		want = (total-k)/n + 1
	}
	if total < 0 || len(idx) != want {
		return false
	}
	for j, i := range idx {
		if i != k-1+j*n {
			return false
		}
	}
	return true
}

// RunShard runs shard K of N of the sweep Run(base, opts) would run: the
// outcomes it returns are exactly Run's at those indexes.
func RunShard(base *sim.World, opts Options, k, n int) (*Part, error) {
	if err := CheckShard(k, n); err != nil {
		return nil, err
	}
	defer raiseGC()()
	p, err := newPlan(base, opts)
	if err != nil {
		return nil, err
	}
	idx := ShardIndexes(k, n, len(p.jobs))
	outcomes, err := p.run(idx)
	if err != nil {
		return nil, err
	}
	return &Part{K: k, N: n, Sweep: p.sweep(), Index: idx, Outcomes: outcomes}, nil
}

// Merge puts shards 1..N of one sweep together into the report Run gives
// for the whole sweep. names name the parts in errors (file names).
func Merge(parts []*Part, names []string) (*Report, Sweep, error) {
	if len(parts) == 0 {
		return nil, Sweep{}, fmt.Errorf("no shard to merge")
	}
	first := parts[0]
	byK := map[int]int{}
	for i, p := range parts {
		if err := CheckShard(p.K, p.N); err != nil {
			return nil, Sweep{}, fmt.Errorf("%s: %v", names[i], err)
		}
		if p.N != first.N {
			return nil, Sweep{}, fmt.Errorf("%s is shard %d/%d and %s is shard %d/%d: the sweep was split two ways", names[0], first.K, first.N, names[i], p.K, p.N)
		}
		if field, a, b := sweepDiff(first.Sweep, p.Sweep); field != "" {
			return nil, Sweep{}, fmt.Errorf("%s and %s are shards of different sweeps: they differ in %s (%s vs %s)", names[0], names[i], field, a, b)
		}
		if j, ok := byK[p.K]; ok {
			return nil, Sweep{}, fmt.Errorf("shard %d/%d given twice (%s and %s)", p.K, p.N, names[j], names[i])
		}
		byK[p.K] = i
		if !isShard(p.Index, p.K, p.N, p.Sweep.Branches) || len(p.Outcomes) != len(p.Index) {
			return nil, Sweep{}, fmt.Errorf("%s: its rows are not the branches of shard %d/%d of a sweep of %d", names[i], p.K, p.N, p.Sweep.Branches)
		}
	}
	if len(byK) != first.N {
		var missing []string
		for k := 1; k <= first.N && len(missing) < 10; k++ {
			if _, ok := byK[k]; !ok {
				missing = append(missing, fmt.Sprintf("%d/%d", k, first.N))
			}
		}
		if n := first.N - len(byK) - len(missing); n > 0 {
			missing = append(missing, fmt.Sprintf("and %d more", n))
		}
		return nil, Sweep{}, fmt.Errorf("shards missing: %s (every shard of the sweep is needed)", strings.Join(missing, " "))
	}
	outcomes := make([]Outcome, first.Sweep.Branches)
	for _, p := range parts {
		for j, i := range p.Index {
			outcomes[i] = p.Outcomes[j]
		}
	}
	return newReport(first.Sweep, outcomes), first.Sweep, nil
}

// sweepDiff names the first field (by its JSON name, in Sweep's order)
// where two sweeps differ, with both values; "" when they are the same.
// The fields are compared in place: the script a sweep carries may be
// hundreds of megabytes, and marshalling each sweep to compare them made
// copies of it. Only a differing field is written out, cut to what the
// error shows.
func sweepDiff(a, b Sweep) (field, va, vb string) {
	t := reflect.TypeFor[Sweep]()
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range t.NumField() {
		fa, fb := ra.Field(i), rb.Field(i)
		if fa.Kind() == reflect.String && fa.String() == fb.String() || fa.Kind() != reflect.String && reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			continue
		}
		k, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		return k, shortJSON(fa), shortJSON(fb)
	}
	return "", "", ""
}

// shortJSON is a value as JSON, as short() shows it: a long string or list
// is cut before it is marshalled (the cut is past what short keeps).
func shortJSON(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); len(s) > 64 {
			v = reflect.ValueOf(s[:64])
		}
	case reflect.Slice:
		if v.Len() > 20 {
			v = v.Slice(0, 20)
		}
	}
	j, _ := json.Marshal(v.Interface())
	return short(string(j))
}

func short(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// ParseShard reads "K/N".
func ParseShard(s string) (k, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("shard %q: want K/N, shard K of N, e.g. 2/4", s)
	}
	return k, n, CheckShard(k, n)
}
