// logs.go: the world's logs as its views and checks read them: the input
// and output partitions B1 leads, their records and what the group
// committed of them.

package sim

import (
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/broker"
	"github.com/kgrepl/kgrepl/sim/internal/store"
	"github.com/kgrepl/kgrepl/sim/topo"
)

// logsView reads B1's logs: the records they hold, how far the group's
// commits reach into the input, what zombies wrote to the output. The
// World holds one (its methods are the World's), handed the world's
// partitions, broker and group by World.connect.
type logsView struct {
	layout *topo.Layout
	broker *broker.Broker
	group  *Group
}

// IsRecord reports whether name is an input record that exists (o2.3, orders-2.3).
func (l *logsView) IsRecord(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return false
	}
	off, err := strconv.Atoi(name[i+1:])
	if err != nil || off < 0 {
		return false
	}
	tp, err := l.layout.ParsePartition(name[:i])
	if err != nil || l.layout.Partitions(tp.Topic) == 0 {
		return false
	}
	for _, t := range l.layout.Inputs() {
		if t == tp {
			return off < l.broker.Log(tp).HW()
		}
	}
	return false
}

// Log returns a partition's log.
func (l *logsView) Log(tp TopicPartition) *PartitionLog { return l.broker.Log(tp) }

// ForgetOutputBeforeForTest lets the output logs go of their cells
// written before tick (broker.ForgetOutputBefore), as a world keeping a
// window of its history does after each tick, even when that frees no
// chunk: for the tests of the views and pictures of other packages,
// whose worlds are smaller than a chunk. (A world must not let its logs
// go of cells whose produced events its trace still spells: Step does it
// for the ticks the trace let go of.)
func (l *logsView) ForgetOutputBeforeForTest(tick int) { l.broker.ForgetAllOutputBefore(tick) }

// ReadRecord is one record as the audit reader returns it.
type ReadRecord struct {
	Partition TopicPartition
	Offset    int
	Value     string
	Source    string
	Aborted   bool
	Open      bool
}

// ReadTopic is the audit reader: the topic from offset 0 at an isolation
// level. read_committed stops at the LSO and skips aborted records;
// read_uncommitted reads to the high watermark and sees them.
func (l *logsView) ReadTopic(topic, isolation string) []ReadRecord {
	var out []ReadRecord
	for _, tp := range append(append([]TopicPartition{}, l.layout.Inputs()...), l.layout.Outputs()...) {
		if tp.Topic != topic {
			continue
		}
		l := l.broker.Log(tp)
		for i, c := range l.Cells.All() {
			if !c.IsData() {
				continue
			}
			if isolation == "read_committed" && !l.ReadCommitted(i) {
				continue
			}
			out = append(out, ReadRecord{Partition: tp, Offset: i, Value: c.Value, Source: c.Source,
				Aborted: c.Txn == TxnAborted, Open: c.Txn == TxnOpen})
		}
	}
	return out
}

// Lag is the log end minus the committed offset, per input partition.
func (l *logsView) Lag(tp TopicPartition) int {
	hw := l.broker.Log(tp).HW()
	if rec, ok := l.group.Offsets.CommittedOffset(tp); ok {
		return hw - rec
	}
	return hw
}

// InputLags is Lag of the input partitions at idx (indexes into
// Layout.Inputs, in that order; nil: every input partition), written
// over dst's room. It reads each partition by its number (lagAt), where
// Lag looks it up by name and reads its log: a chart of a real group's
// 100,000 partitions reads every lag at every tick it replays, and each
// log's first read was a cache miss.
func (l *logsView) InputLags(dst, idx []int) []int {
	if idx == nil {
		dst = store.ReuseBuf(dst, len(l.layout.Inputs()))
		for i := range dst {
			dst[i] = l.lagAt(i)
		}
		return dst
	}
	dst = store.ReuseBuf(dst, len(idx))
	for j, i := range idx {
		dst[j] = l.lagAt(i)
	}
	return dst
}

// TotalLag is the sum of InputLags(nil, idx), summed as read.
func (l *logsView) TotalLag(idx []int) int {
	n := 0
	if idx == nil {
		for i := range l.layout.Inputs() {
			n += l.lagAt(i)
		}
		return n
	}
	for _, i := range idx {
		n += l.lagAt(i)
	}
	return n
}

// lagAt is Lag of the input partition numbered i (Layout.Inputs()[i]):
// its log is the broker's log numbered i, whose end a log with steady
// production keeps in the leader's array (Broker.SteadyEnd), and its
// commit is the offset table's slot i.
func (l *logsView) lagAt(i int) int {
	hw := l.hwAt(i)
	if rec, ok := l.group.Offsets.CommittedAt(i); ok {
		return hw - rec
	}
	return hw
}

// hwAt is Log.HW of the input partition numbered i, read from the
// leader's array while it has steady production (Broker.SteadyEnd).
func (l *logsView) hwAt(i int) int {
	if hw, ok := l.broker.SteadyEnd(i); ok {
		return hw
	}
	return l.broker.Logs()[i].HW()
}

// inputsCommitted reports whether no input partition lags (Lag is 0 for
// each), reading each by its number (lagAt).
func (l *logsView) inputsCommitted() bool {
	for i := range l.layout.Inputs() {
		if l.lagAt(i) != 0 {
			return false
		}
	}
	return true
}

// ZombieWrites counts records written to an output partition by a process
// that had lost its place (replaced by a restart, or out of the group)
// when the write landed.
func (l *logsView) ZombieWrites() int { return l.broker.ZombieWrites }
