package sim_test

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kgrepl/kgrepl/sim/simtest"
)

// TestScripts runs the engine's scenario scripts, testdata/{classic,
// consumer,migration,txn}/*, with sim/simtest's harness: each says what
// Kafka behaviour it pins and where Kafka's source keeps the rule, and its
// expected output is the trace. `go test ./sim -run Scripts -rewrite`
// writes the outputs anew; read the diff.
func TestScripts(t *testing.T) {
	for _, dir := range []string{"classic", "consumer", "migration", "txn"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			datadriven.Walk(t, filepath.Join("testdata", dir), func(t *testing.T, path string) {
				simtest.RunScript(t, path)
			})
		})
	}
}
