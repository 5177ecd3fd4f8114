package kernel

import "testing"

// BenchmarkNewSession is what the REPL does before its first prompt: make
// the default world and the command table's session. Target: well under
// 100 ms.
func BenchmarkNewSession(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := NewSession()
		if s.Prompt() == "" {
			b.Fatal("no prompt")
		}
	}
}

// BenchmarkDemo runs demo 3 (cooperative-sticky, seven generations) end to end.
func BenchmarkDemo(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := NewSession().Exec("demo 3"); err != nil {
			b.Fatal(err)
		}
	}
}
