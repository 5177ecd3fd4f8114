package kafkafmt

import (
	"fmt"
	"strings"
	"testing"
)

// bigGroup is a consumer group at the size kgrepl's worlds reach: members
// members over topics × partitions, each partition held by one member.
func bigGroup(members, topics, partitions int) Group {
	g := Group{ID: "big-group", State: StateStable, Protocol: ProtocolConsumer}
	g.Members = make([]Member, members)
	cur := make([][]TopicPartition, members)
	i := 0
	for t := 0; t < topics; t++ {
		topic := fmt.Sprintf("events-%03d", t)
		for p := 0; p < partitions; p++ {
			cur[i%members] = append(cur[i%members], TopicPartition{topic, int32(p)})
			i++
		}
	}
	for m := range g.Members {
		sortTPs(cur[m])
		g.Members[m] = Member{ConsumerID: fmt.Sprintf("member-%06d-4c1e9d0a7b1d2c3e", m), Host: "/10.0.0.1",
			ClientID: fmt.Sprintf("app-%d", m), Partitions: len(cur[m]), Assignment: some(cur[m]), Target: some(cur[m]),
			CurrentEpoch: some(int32(7)), TargetEpoch: some(int32(7))}
		for _, tp := range cur[m] {
			g.Offsets = append(g.Offsets, Offset{TopicPartition: tp, CurrentOffset: some(int64(1000)), LogEndOffset: some(int64(1500)),
				Lag: some(int64(500)), ConsumerID: g.Members[m].ConsumerID, Host: "/10.0.0.1", ClientID: g.Members[m].ClientID})
		}
	}
	return g
}

// BenchmarkParseDescribeLarge: --members --verbose and the offsets table of
// 10,000 members over 1,000,000 partitions (1,000 topics × 1,000), as
// Kafka 4.1 prints them. Run: go test ./kernel/kafkafmt -run x -bench Large
func BenchmarkParseDescribeLarge(b *testing.B) {
	g := bigGroup(benchMembers, benchTopics, 1_000)
	text := printDescribe(v41, modeMembers, true, []Group{g}) + printDescribe(v41, modeOffsets, false, []Group{g})
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuSeconds()
	for i := 0; i < b.N; i++ {
		groups, err := ParseDescribe(strings.NewReader(text))
		if err != nil || len(groups[0].Offsets) != benchTopics*1_000 {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(len(text))/(1<<20), "file-MiB")
}

var benchMembers, benchTopics = 10_000, 1_000
