package digits

import "testing"

func TestGroup(t *testing.T) {
	for in, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 65536: "65,536", 1000000: "1,000,000", -1234567: "-1,234,567", -12: "-12"} {
		if got := Int(in); got != want {
			t.Errorf("Int(%d) = %q, want %q", in, got, want)
		}
	}
	if got := Group("123456789012345678901234567890"); got != "123,456,789,012,345,678,901,234,567,890" {
		t.Errorf("Group of a big number: %q", got)
	}
}
