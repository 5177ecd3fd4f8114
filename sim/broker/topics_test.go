package broker

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// TestTopicRunsAreTheLayouts: the topics a broker keeps from Fetch to
// Fetch (topicRuns) number every partition as the layout does, for more
// topics than it keeps, asked in runs and at random, by the layout's
// strings and by copies of them, output and unknown ones too.
func TestTopicRunsAreTheLayouts(t *testing.T) {
	shape := topo.Topology{Output: topo.TopicSpec{Name: "out", Partitions: 3}, Group: "g"}
	for k := 0; k < 40; k++ {
		shape.Inputs = append(shape.Inputs, topo.TopicSpec{Name: fmt.Sprintf("t%02d", k), Partitions: 1 + k%7})
	}
	layout := topo.New(shape)
	var tps []wire.TopicPartition
	tps = append(tps, layout.Inputs()...)
	tps = append(tps, layout.Outputs()...)
	tps = append(tps, wire.TopicPartition{Topic: "none", Partition: 0}, wire.TopicPartition{Topic: "t03", Partition: 99}, wire.TopicPartition{Topic: "t03", Partition: -1})
	r := rand.New(rand.NewSource(9))
	var runs topicRuns
	for step := 0; step < 20000; step++ {
		var tp wire.TopicPartition
		if r.Intn(2) == 0 {
			tp = tps[r.Intn(len(tps))]
		} else { // a member's fetch: one partition of each of a few topics in turn
			tp = tps[(step%24)*3%len(tps)]
		}
		if r.Intn(3) == 0 {
			tp.Topic = strings.Clone(tp.Topic) // not the layout's string
		}
		n, ok := runs.number(layout, tp)
		wn, wok := layout.Number(tp)
		var one topicRun // a Fetch's own, as answerFetch had
		on, ook := one.number(layout, tp)
		if ok != wok || ok && n != wn || n != on || ok != ook {
			t.Fatalf("step %d: %v numbered %d %v, the layout says %d %v, a topicRun %d %v", step, tp, n, ok, wn, wok, on, ook)
		}
	}
}
