package assign

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePartitions(t *testing.T) {
	got, err := ParsePartitions("orders-0 my-topic-12,  t1-3,")
	want := []TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "my-topic", Partition: 12}, {Topic: "t1", Partition: 3}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	if got, err := ParsePartitions("  "); got != nil || err != nil {
		t.Errorf("empty spec: got %#v, %v; want nil, nil", got, err)
	}
	for spec, msg := range map[string]string{
		"orders":    `"orders": want a topic name, '-' and a partition number`,
		"-3":        `"-3": want a topic name`,
		"orders-x":  `"x" after the last '-' is not a partition number`,
		"orders-2-": `"" after the last '-' is not a partition number`,
	} {
		if _, err := ParsePartitions("t-0 " + spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParsePartitions(%q): error %v, want one saying %s", spec, err, msg)
		}
	}
}
