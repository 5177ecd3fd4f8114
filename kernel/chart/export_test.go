package chart

import "github.com/kgrepl/kgrepl/sim"

// GreyTicks adds up, by cause, the ticks the timeline paints grey over
// every partition of r: the spans its Plot draws.
func GreyTicks(r *Run) sim.CauseCounts {
	var out sim.CauseCounts
	end := lastTick(r)
	for i := range r.Partitions {
		for _, s := range spans(r, i, end, func(o Ownership) (string, sim.Cause) { return o.Owner, o.Cause }) {
			out[s.cause] += int(s.to - s.from)
		}
	}
	out[sim.Available] = 0
	return out
}

// StackTicks adds up, by cause, the partition-ticks the unavailable
// chart's columns stand for.
func StackTicks(r *Run) sim.CauseCounts {
	var out sim.CauseCounts
	for _, col := range (&stack{run: r}).columns() {
		for _, c := range sim.Causes {
			out[c] += col.n[c] * int(col.to-col.from)
		}
	}
	return out
}
