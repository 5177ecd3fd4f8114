package broker

import (
	"fmt"

	"github.com/kgrepl/kgrepl/sim/wire"
)

// fetchSlot is the number Fetch r's member gave its partition i
// (FetchRequest.Slots: an input partition's, checked), true, else -1.
func fetchSlot(r *wire.FetchRequest, i int) (int, bool) {
	if len(r.Slots) == len(r.Partitions) && r.Slots[i] >= 0 {
		return int(r.Slots[i]), true
	}
	return -1, false
}

// numberChecked is tp's number (topicRuns.number); under
// VerifyFetchSlotsForTest it panics when slot, a Fetch's own number for
// tp (-1: none), is another.
func (b *Broker) numberChecked(tp wire.TopicPartition, slot int, known bool) (int, bool) {
	n, ok := b.topics.number(b.layout, tp)
	if slot >= 0 && (slot != n || known != ok) {
		panic(fmt.Sprintf("broker: a Fetch numbers %s %d (%v), the layout %d (%v)", tp, slot, known, n, ok))
	}
	return n, ok
}

// verifySlots makes the leader check each number a Fetch gives its
// partitions against the layout's: tests only (VerifyFetchSlotsForTest).
var verifySlots bool

// VerifyFetchSlotsForTest makes the leader check the numbers each Fetch
// gives its partitions (wire.FetchRequest.Slots) against the layout's as
// it answers, panicking on a difference; it returns the function that
// restores the setting.
func VerifyFetchSlotsForTest() (restore func()) {
	old := verifySlots
	verifySlots = true
	return func() { verifySlots = old }
}
