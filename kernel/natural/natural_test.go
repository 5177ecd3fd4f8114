package natural

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestOrder(t *testing.T) {
	got := Sorted([]string{"C10", "C2", "C1", "C12", "C11", "C3", "B1", "C10-1", "C2-1", "C2-10", "C2-2", "orders-10", "orders-2", "C02"})
	want := "B1 C1 C02 C2 C2-1 C2-2 C2-10 C3 C10 C10-1 C11 C12 orders-2 orders-10"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestCompareIsAnOrder: antisymmetric, equal only for equal strings, and
// transitive over random names of letters, dashes and digits.
func TestCompareIsAnOrder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	name := func() string {
		const alphabet = "C0129-a"
		b := make([]byte, r.Intn(6))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		return string(b)
	}
	var names []string
	for i := 0; i < 300; i++ {
		names = append(names, name())
	}
	for _, a := range names {
		for _, b := range names {
			if Compare(a, b) != -Compare(b, a) {
				t.Fatalf("Compare(%q, %q) = %d, Compare(%q, %q) = %d", a, b, Compare(a, b), b, a, Compare(b, a))
			}
			if (Compare(a, b) == 0) != (a == b) {
				t.Fatalf("Compare(%q, %q) = %d", a, b, Compare(a, b))
			}
		}
	}
	sorted := Sorted(names)
	for i := 1; i < len(sorted); i++ {
		for j := i; j < len(sorted); j++ {
			if Compare(sorted[i-1], sorted[j]) > 0 {
				t.Fatalf("%q sorts before %q but compares after it", sorted[i-1], sorted[j])
			}
		}
	}
	if !slices.IsSortedFunc(sorted, Compare) {
		t.Fatal("Sorted is not sorted by Compare")
	}
}
