package topo

import (
	"math/rand"
	"strconv"
	"testing"
)

// topicSpans answers as the map it is built from, scanning a few topics
// and hashing many: every input topic, and names that are none.
func TestPropertyTopicSpansAsMap(t *testing.T) {
	for seed := int64(0); seed < 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		n := 1 + r.Intn(2*fewTopics)
		var inputs []TopicSpec
		m := map[string]Span{}
		for i := 0; i < n; i++ {
			name := string(rune('a'+r.Intn(26))) + strconv.Itoa(i)
			inputs = append(inputs, TopicSpec{Name: name, Partitions: 1 + r.Intn(5)})
			m[name] = Span{At: r.Intn(100), N: 1 + r.Intn(5)}
		}
		ts := newTopicSpans(inputs, m)
		if (ts.m != nil) != (n > fewTopics) {
			t.Fatalf("seed %d: %d topics, map used %v", seed, n, ts.m != nil)
		}
		for _, name := range append([]string{"", "zz", "orders"}, func() []string {
			var s []string
			for _, in := range inputs {
				s = append(s, in.Name, in.Name+"x", in.Name[:1])
			}
			return s
		}()...) {
			want, wok := m[name]
			got, ok := ts.get(name)
			if ok != wok || got != want {
				t.Fatalf("seed %d: get(%q) = %v %v, want %v %v", seed, name, got, ok, want, wok)
			}
		}
	}
}
