// Package kerneltest holds what tests of the kernel's picture packages
// share: sessions in a known state.
package kerneltest

import (
	"bytes"
	"os"
	"path/filepath"
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

// Golden compares got with testdata/name, or writes it there when rewrite
// is set; pkg names the package for the message that says how to rewrite.
func Golden(t testing.TB, pkg, name string, got []byte, rewrite bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if rewrite {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./%s -rewrite to make it)", err, pkg)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (%d bytes, want %d); if the change is meant, run go test ./%s -rewrite and read the diff",
			name, len(got), len(want), pkg)
	}
}
