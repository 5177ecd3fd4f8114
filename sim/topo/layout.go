package topo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// Layout is a world's partitions, numbered: the input partitions in
// (topic, partition) order, then the output topic's in order. A log, a
// member's position, a committed offset and a record reference in the
// trace all find their partition by that number. Made once, by New, and
// read-only from then on: a world and its clones share it.
type Layout struct {
	Topology  Topology
	inputTPs  []wire.TopicPartition // sorted
	outputTPs []wire.TopicPartition
	topicSize map[string]int
	// short: the default topics (orders and payments), whose records are
	// named o2.3, p0.1 and partitions o2, p0.
	short bool
	input InputIndex
	// inHash is each input partition's part of its records' names hashed
	// (fnvPartition from FNVBasis), by its number: the partitioner's start
	// (PartitionerOf).
	inHash []uint32
	outsM  uint64 // reciprocal(the output partitions), the partitioner's
	// slotPat is the partitioner's slots of a hundred by class, when the
	// output partitions are a small power of two (newSlotPattern)
	slotPat *slotPattern
}

// New numbers the partitions of a topology (which Validate accepts).
func New(t Topology) *Layout {
	l := &Layout{Topology: t, topicSize: map[string]int{}, short: true}
	for _, in := range t.Inputs {
		if in.Name != "orders" && in.Name != "payments" {
			l.short = false
		}
	}
	for _, in := range t.Inputs {
		l.topicSize[in.Name] = in.Partitions
		for p := 0; p < in.Partitions; p++ {
			l.inputTPs = append(l.inputTPs, wire.TopicPartition{Topic: in.Name, Partition: p})
		}
	}
	wire.SortPartitions(l.inputTPs)
	inputAt := make(map[string]Span, len(t.Inputs))
	for i := len(l.inputTPs) - 1; i >= 0; i-- {
		inputAt[l.inputTPs[i].Topic] = Span{At: i, N: l.topicSize[l.inputTPs[i].Topic]}
	}
	l.input = InputIndex{at: newTopicSpans(t.Inputs, inputAt), tps: l.inputTPs}
	l.inHash = make([]uint32, len(l.inputTPs))
	for i, tp := range l.inputTPs {
		l.inHash[i] = l.fnvPartition(FNVBasis, tp)
	}
	l.topicSize[t.Output.Name] = t.Output.Partitions
	for p := 0; p < t.Output.Partitions; p++ {
		l.outputTPs = append(l.outputTPs, wire.TopicPartition{Topic: t.Output.Name, Partition: p})
	}
	if len(l.outputTPs) > 0 {
		l.outsM = reciprocal(uint32(len(l.outputTPs)))
		l.slotPat = newSlotPattern(uint32(len(l.outputTPs)))
	}
	return l
}

// Inputs lists the input partitions, sorted; the list is the layout's.
func (l *Layout) Inputs() []wire.TopicPartition { return l.inputTPs }

// Outputs lists the output partitions; the list is the layout's.
func (l *Layout) Outputs() []wire.TopicPartition { return l.outputTPs }

// Input is the numbering of the input partitions.
func (l *Layout) Input() *InputIndex { return &l.input }

// Partitions is a topic's partition count (0 for a topic the world has not).
func (l *Layout) Partitions(topic string) int { return l.topicSize[topic] }

// HasTopic reports whether the world has the topic (input or output).
func (l *Layout) HasTopic(topic string) bool { _, ok := l.topicSize[topic]; return ok }

// TopicSizes is every topic's partition count; the map is the layout's,
// never to be changed.
func (l *Layout) TopicSizes() map[string]int { return l.topicSize }

// InputTopics lists the input topics' names in the topology's order.
func (l *Layout) InputTopics() []string {
	var ts []string
	for _, t := range l.Topology.Inputs {
		ts = append(ts, t.Name)
	}
	return ts
}

// Short reports whether records have the seed's short names (o2.3).
func (l *Layout) Short() bool { return l.short }

// Number is tp's number: an input partition's place among the inputs (the
// number InputIndex.Slot gives: the offset table, the offsets log and the
// log cells use it too), then the output topic's. False for a partition
// the world does not have. One lookup of the topic: every partition of
// every commit's text is numbered here.
func (l *Layout) Number(tp wire.TopicPartition) (int, bool) {
	if s, ok := l.input.at.get(tp.Topic); ok {
		return s.At + tp.Partition, tp.Partition >= 0 && tp.Partition < s.N
	}
	o := l.Topology.Output
	return len(l.inputTPs) + tp.Partition, o.Name == tp.Topic && tp.Partition >= 0 && tp.Partition < o.Partitions
}

// Numbered is the partition numbered i (Number), and whether it is an
// input one.
func (l *Layout) Numbered(i uint64) (tp wire.TopicPartition, input, ok bool) {
	if n := uint64(len(l.inputTPs)); i < n {
		return l.inputTPs[i], true, true
	} else if i-n < uint64(l.Topology.Output.Partitions) {
		return wire.TopicPartition{Topic: l.Topology.Output.Name, Partition: int(i - n)}, false, true
	}
	return wire.TopicPartition{}, false, false
}

// ShortName is o2 for orders-2 in the default world, else the full name.
func (l *Layout) ShortName(tp wire.TopicPartition) string {
	if l.short {
		return tp.Topic[:1] + strconv.Itoa(tp.Partition)
	}
	return tp.String()
}

// AppendShortName appends ShortName(tp) to b.
func (l *Layout) AppendShortName(b []byte, tp wire.TopicPartition) []byte {
	if l.short {
		b = append(b, tp.Topic[0])
	} else {
		b = append(b, tp.Topic...)
		b = append(b, '-')
	}
	return strconv.AppendInt(b, int64(tp.Partition), 10)
}

// AppendPartition appends tp as TopicPartition.String spells it (orders-2),
// without building a string.
func AppendPartition(b []byte, tp wire.TopicPartition) []byte {
	b = append(b, tp.Topic...)
	b = append(b, '-')
	return strconv.AppendInt(b, int64(tp.Partition), 10)
}

// ParsePartition reads "orders-2", or "o2" in the default world.
func (l *Layout) ParsePartition(s string) (wire.TopicPartition, error) {
	if l.short && len(s) >= 2 && (s[0] == 'o' || s[0] == 'p') {
		if n, err := strconv.Atoi(s[1:]); err == nil {
			topic := "orders"
			if s[0] == 'p' {
				topic = "payments"
			}
			tp := wire.TopicPartition{Topic: topic, Partition: n}
			if _, ok := l.Number(tp); ok {
				return tp, nil
			}
		}
	}
	i := strings.LastIndexByte(s, '-')
	if i > 0 {
		if n, err := strconv.Atoi(s[i+1:]); err == nil {
			tp := wire.TopicPartition{Topic: s[:i], Partition: n}
			if _, ok := l.Number(tp); ok {
				return tp, nil
			}
		}
	}
	return wire.TopicPartition{}, fmt.Errorf("no partition %q (partitions: %s)", s, l.partitionNamesShort())
}

// partitionNamesShort lists the partitions for an error: every one in a
// world of up to 24, else the first 12 and how many in all (a world of
// 100,000 partitions made a 700 KB error of one mistyped name).
func (l *Layout) partitionNamesShort() string {
	names := l.PartitionNames()
	if len(names) <= 24 {
		return strings.Join(names, " ")
	}
	return fmt.Sprintf("%s ... %s, %d in all", strings.Join(names[:12], " "), names[len(names)-1], len(names))
}

// PartitionNames lists every partition by its full name, inputs then outputs.
func (l *Layout) PartitionNames() []string {
	var out []string
	for _, tp := range l.inputTPs {
		out = append(out, tp.String())
	}
	for _, tp := range l.outputTPs {
		out = append(out, tp.String())
	}
	return out
}

// Span is where an input topic's partitions lie among the inputs (false
// for a topic that is no input).
func (l *Layout) Span(topic string) (Span, bool) { return l.input.at.get(topic) }

// PartList spells partitions the seed's way, sorted: {o0 o1 p2}.
func (l *Layout) PartList(tps []wire.TopicPartition) string {
	return string(l.AppendPartList(make([]byte, 0, 4*len(tps)+2), tps))
}

// AppendPartList appends PartList(tps) to b; it sorts a copy when tps is
// not sorted already.
func (l *Layout) AppendPartList(b []byte, tps []wire.TopicPartition) []byte {
	b = append(b, '{')
	for i, tp := range wire.SortedView(tps) {
		if i > 0 {
			b = append(b, ' ')
		}
		b = l.AppendShortName(b, tp)
	}
	return append(b, '}')
}

// Offsets spells positions or commits, "o0@3 o1@5": built in one buffer,
// as it is written for every commit and fetch.
func (l *Layout) Offsets(tps []wire.TopicPartition, offs []int) string {
	return string(l.AppendOffsets(make([]byte, 0, 8*len(tps)), tps, offs))
}

// AppendOffsets appends Offsets(tps, offs) to b.
func (l *Layout) AppendOffsets(b []byte, tps []wire.TopicPartition, offs []int) []byte {
	for i, tp := range tps {
		if i > 0 {
			b = append(b, ' ')
		}
		b = l.AppendShortName(b, tp)
		b = append(b, '@')
		b = strconv.AppendInt(b, int64(offs[i]), 10)
	}
	return b
}
