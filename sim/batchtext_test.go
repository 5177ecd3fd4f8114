package sim

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/trace"
)

// spellBatch spells record names as BatchText should, from Batch's list:
// names that follow each other in one partition (TP.offset, the offset
// one past the one before) are a run, spelled name by name up to
// SpellRunMax records and first..last past it.
func spellBatch(names []string) string {
	split := func(n string) (string, int, bool) {
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			return "", 0, false
		}
		off, err := strconv.Atoi(n[i+1:])
		return n[:i], off, err == nil
	}
	var parts []string
	for i := 0; i < len(names); {
		tp, off, ok := split(names[i])
		j := i + 1
		for ok && j < len(names) {
			tp2, off2, ok2 := split(names[j])
			if !ok2 || tp2 != tp || off2 != off+(j-i) {
				break
			}
			j++
		}
		if j-i > trace.SpellRunMax {
			parts = append(parts, names[i]+".."+names[j-1])
		} else {
			parts = append(parts, names[i:j]...)
		}
		i = j
	}
	return strings.Join(parts, " ")
}

// checkBatchText checks every process's BatchText against its Batch.
func checkBatchText(t *testing.T, w *World) (long int) {
	t.Helper()
	for _, m := range w.Processes() {
		recs, done := m.Batch()
		text, done2 := m.BatchText()
		if want := spellBatch(recs); text != want || done2 != done {
			t.Fatalf("tick %d %s: BatchText %q done %d, Batch spelled %q done %d", w.Tick, m.Client, text, done2, want, done)
		}
		if strings.Contains(text, "..") {
			long++
		}
	}
	return long
}

// TestBatchTextOfThePage: the page's batches (max.poll.records 3) read
// record by record, as the members view has always printed them.
func TestBatchTextOfThePage(t *testing.T) {
	w, err := New(DefaultTopology(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 120; i++ {
		w.Step()
		if n := checkBatchText(t, w); n != 0 {
			t.Fatalf("tick %d: %d batches read as ranges in the page's world", w.Tick, n)
		}
		for _, m := range w.Processes() {
			recs, _ := m.Batch()
			if text, _ := m.BatchText(); text != strings.Join(recs, " ") {
				t.Fatalf("tick %d %s: %q, the page spells %q", w.Tick, m.Client, text, strings.Join(recs, " "))
			}
		}
	}
}

// TestBatchTextOfSteadyTraffic: a poll of max.poll.records 500 from
// steady partitions reads as ranges, and how far processing got is
// counted in records as Batch counts it.
func TestBatchTextOfSteadyTraffic(t *testing.T) {
	// max.poll.records at and around the spelling's bound, and Kafka's.
	for _, maxPoll := range []int{trace.SpellRunMax, trace.SpellRunMax + 1, 40, 500} {
		cfg := KafkaDefaultConfig()
		cfg.RecordsPerPartition = 300
		cfg.Client.MaxPollRecords = maxPoll
		cfg.Client.ProcessTicks, cfg.Client.ProcessRecords = ProcessingMSToTicks(1, 20, cfg.TickMS)
		w := steadyWorld(t, bigTopology(4, 2, 8), cfg, 1000)
		long := 0
		for i := 0; i < 1000; i++ {
			w.Step()
			long += checkBatchText(t, w)
		}
		if (long > 0) != (maxPoll > trace.SpellRunMax) {
			t.Fatalf("max.poll.records %d: %d batches read as ranges", maxPoll, long)
		}
	}
}
