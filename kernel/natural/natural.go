// Package natural orders names as people count: C2 before C10, o2 before
// o10, C2-1 before C10-1. Pictures, legends and tables list members this
// way; the protocol keeps Kafka's own string order where Kafka uses it
// (assignors, the coordinator's member order), which is the engine's.
package natural

import "sort"

// Compare orders a and b with each run of digits read as a number: -1
// when a comes first, 1 when b does, 0 when they are equal. Runs of equal
// value but different length ("C2", "C02") are ordered by their text, so
// only equal strings compare equal.
func Compare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			// Compare the numbers without parsing them (any length): the
			// longer one without leading zeros is larger.
			na, nb := trimZeros(a[si:i]), trimZeros(b[sj:j])
			if len(na) != len(nb) {
				return sign(len(na) - len(nb))
			}
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
			continue
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	case a < b: // equal as numbers, other digits (C02, C2)
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Less reports whether a comes before b in natural order.
func Less(a, b string) bool { return Compare(a, b) < 0 }

// Sort sorts names in natural order, in place.
func Sort(names []string) {
	sort.SliceStable(names, func(i, j int) bool { return Less(names[i], names[j]) })
}

// Sorted is a copy of names in natural order.
func Sorted(names []string) []string {
	out := append([]string(nil), names...)
	Sort(out)
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
