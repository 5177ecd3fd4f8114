package store

import "sort"

// Narrow is v minus base when it is below limit (and not negative); false
// when it does not fit.
func Narrow(v, base, limit int64) (uint16, bool) {
	if d := v - base; d >= 0 && d < limit {
		return uint16(d), true
	}
	return 0, false
}

// FarAt finds record i's entry among the fields kept apart (far: in the
// order of the records they are for, id giving that record's index),
// among those far still keeps (Seq.First).
func FarAt[T any](far *Seq[T], i int, id func(T) int32) (T, bool) {
	n, first := far.Len(), far.First()
	k := first + sort.Search(n-first, func(k int) bool { return int(id(far.At(first+k))) >= i })
	if k < n && int(id(far.At(k))) == i {
		return far.At(k), true
	}
	var zero T
	return zero, false
}
