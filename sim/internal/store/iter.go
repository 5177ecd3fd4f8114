package store

import "iter"

// RangeFrom ranges over at(i) for i from from up to n, with the indexes.
func RangeFrom[T any](from, n int, at func(int) T) iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		for i := from; i < n; i++ {
			if !yield(i, at(i)) {
				return
			}
		}
	}
}

// SliceOf copies at(i) for i in [from, to) into a new slice.
func SliceOf[T any](from, to int, at func(int) T) []T {
	if from >= to {
		return nil
	}
	out := make([]T, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, at(i))
	}
	return out
}
