// Package kerneltest holds what tests of the kernel's picture packages
// share: sessions in a known state.
package kerneltest

import (
	"strconv"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
)

// Demo runs demo n in a fresh session and returns the session.
func Demo(t testing.TB, n int) *kernel.Session {
	t.Helper()
	s := kernel.NewSession()
	if _, err := s.Exec("demo " + strconv.Itoa(n)); err != nil {
		t.Fatalf("demo %d: %v", n, err)
	}
	return s
}
