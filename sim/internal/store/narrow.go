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
// order of the records they are for, id giving that record's index; those
// let go of, below far.First, are not searched).
func FarAt[T any](far *Seq[T], i int, id func(T) int32) (T, bool) {
	n, lo := far.Len(), far.First()
	k := lo + sort.Search(n-lo, func(k int) bool { return int(id(far.At(lo+k))) >= i })
	if k < n && int(id(far.At(k))) == i {
		return far.At(k), true
	}
	var zero T
	return zero, false
}

// ForgetFarBefore lets go of far's chunks whose entries are all for
// records before index i (Seq.ForgetBefore).
func ForgetFarBefore[T any](far *Seq[T], i int, id func(T) int32) {
	n, lo := far.Len(), far.First()
	k := lo + sort.Search(n-lo, func(k int) bool { return int(id(far.At(lo+k))) >= i })
	far.ForgetBefore(k)
}
