package chart

import "strings"

// TimeTickLabels is timeTicks' marks over ticks min..max, for tests.
func TimeTickLabels(tickMS int, min, max float64, most int) string {
	t := timeTicks{tickMS: tickMS, max: most, hours: max*float64(tickMS) >= 3_600_000}
	var out []string
	for _, m := range t.Ticks(min, max) {
		out = append(out, m.Label)
	}
	return strings.Join(out, " ")
}
