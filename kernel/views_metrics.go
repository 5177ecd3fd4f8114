package kernel

// The `metrics` and `members` views: the group's counts and pauses, and
// each member's state.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/health"
	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

type metricsJSON struct {
	Tick                int         `json:"tick"`
	Generation          int         `json:"generation"`
	Rebalances          int         `json:"rebalances"`
	PausePartitionTicks int         `json:"pause_partition_ticks"`
	Processed           int         `json:"processed"`
	Duplicates          int         `json:"duplicates"`
	Lost                int         `json:"lost"`
	Pauses              []pauseJSON `json:"pauses"`
	Isolation           string      `json:"isolation"`
	DuplicatesRC        int         `json:"duplicates_read_committed"`
	DuplicatesRU        int         `json:"duplicates_read_uncommitted"`
	LostRC              int         `json:"lost_read_committed"`
	LostRU              int         `json:"lost_read_uncommitted"`
	DuplicateRecords    []string    `json:"duplicate_records"`
	LostRecords         []string    `json:"lost_records"`
	HeldBack            int         `json:"held_back_by_lso"`
	LSOHeldTicks        int         `json:"lso_held_partition_ticks"`
	ZombieWrites        int         `json:"zombie_writes"`
	TxnAborted          int         `json:"transactions_aborted"`
	TxnTimedOut         int         `json:"transactions_timed_out"`
	Fenced              int         `json:"fenced_requests"`
	SinkDuplicates      int         `json:"external_sink_duplicates"`
	Lag                 int         `json:"lag"`
	// A consumer group (KIP-848) has no generation: generation, rebalances
	// and each pause's generation are counted by group epoch, and these
	// two say so. A classic group's line does not have them.
	Protocol   string `json:"protocol,omitempty"`
	GroupEpoch *int   `json:"group_epoch,omitempty"`
	// Unavailability by cause, the most lag and the health at the end
	// (kernel/health: compare and explore show the same).
	health.Summary
	// In real time (time ms): the clock's tick, the time now, and the
	// pause meter and the LSO's hold in partition x seconds (SPEC §12).
	// Absent on the page's scale.
	TickMS                *int     `json:"tick_ms,omitempty"`
	TimeMS                *int64   `json:"time_ms,omitempty"`
	PausePartitionSeconds *float64 `json:"pause_partition_seconds,omitempty"`
	LSOHeldSeconds        *float64 `json:"lso_held_partition_seconds,omitempty"`
	// Rolls are the rolling deploys (roll), with what each cost; only
	// when there was one.
	Rolls []rollJSON `json:"rolls,omitempty"`
	// In real time: the unavailability in partition x seconds (its
	// partition x ticks stay in unavailable_partition_ticks).
	UnavailableSeconds *float64 `json:"unavailable_partition_seconds,omitempty"`
}

type pauseJSON struct {
	Generation     int      `json:"generation"`
	Partitions     []string `json:"partitions"`
	PartitionTicks int      `json:"partition_ticks"`
	// In real time: partition x seconds.
	PartitionSeconds *float64 `json:"partition_seconds,omitempty"`
}

// seconds is a number of ticks as seconds (exact to the millisecond).
func (c clock) seconds(ticks int) *float64 {
	v := float64(c.ms(ticks)) / 1000
	return &v
}

// buildMetrics reads the metrics off the world, looking for Ctrl-C; the
// rows per rebalance (Pauses) are left empty for the view to write.
func buildMetrics(s *Session, w *sim.World) (metricsJSON, error) {
	iso := w.Cfg.Isolation
	// Each level read once (Delivery reads every output run): the
	// world's own is one of the two (Delivery reads any other as
	// read_uncommitted).
	rc, ru := w.Delivery("read_committed"), w.Delivery("read_uncommitted")
	c := ru
	if iso == "read_committed" {
		c = rc
	}
	m := metricsJSON{Tick: w.Tick, Generation: generationOf(w.Group), Rebalances: w.Group.RebalanceStarts,
		PausePartitionTicks: w.Meter.Total, Processed: w.Processed(), Duplicates: c.Duplicates, Lost: c.Lost,
		Pauses: []pauseJSON{}, Isolation: iso, DuplicatesRC: rc.Duplicates, DuplicatesRU: ru.Duplicates,
		LostRC: rc.Lost, LostRU: ru.Lost, DuplicateRecords: nonNil(natural.Sorted(c.DuplicateNames)), LostRecords: nonNil(natural.Sorted(c.LostNames)), HeldBack: c.HeldBack, LSOHeldTicks: w.LSOHeldTicks, ZombieWrites: w.ZombieWrites(),
		TxnAborted: w.Txn.Aborted, TxnTimedOut: w.Txn.TimedOut, Summary: health.Of(w)}
	if w.Group.Type() == sim.ConsumerGroup {
		m.Protocol = string(sim.ConsumerGroup)
		e := w.Group.Describe().GroupEpoch
		m.GroupEpoch = &e
	}
	// The errors of the whole trace, read from its compact records.
	w.Packets.ErrorsFrom(0, func(_ sim.API, _ bool, e sim.ErrorCode) {
		if e == sim.ProducerFenced || e == sim.InvalidProducerEpoch || e == sim.FencedInstanceID {
			m.Fenced++
		}
	})
	k := 0
	for r := range w.Sink.Runs() {
		if err := s.pollRow("metrics", k); err != nil {
			return m, err
		}
		k++
		if r.Times > 1 {
			m.SinkDuplicates += (r.Times - 1) * (r.To - r.From)
		}
	}
	m.Lag = w.TotalLag(nil)
	if clk := clockOf(w); clk.real {
		tickMS, now := clk.tickMS, clk.ms(w.Tick)
		m.TickMS, m.TimeMS = &tickMS, &now
		m.PausePartitionSeconds, m.LSOHeldSeconds = clk.seconds(m.PausePartitionTicks), clk.seconds(m.LSOHeldTicks)
		m.UnavailableSeconds = clk.seconds(m.Unavailable)
	}
	m.Rolls = rollsJSON(w, clockOf(w))
	return m, nil
}

// unavailableSum is the unavailability as the sum of its causes, each
// count of partition x ticks written by num: "196 = rebalance 168 + owner
// down 28 + unassigned 0 + stopped 0" (in real time, each in partition x
// seconds).
func unavailableSum(s health.Summary, num func(int) string) string {
	parts := []string{num(s.Unavailable)}
	for i, c := range sim.Causes {
		sep := " = "
		if i > 0 {
			sep = " + "
		}
		parts = append(parts, sep+health.CauseName(c)+" "+num(s.ByCause[c.String()]))
	}
	return strings.Join(parts, "")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func cmdMetrics(s *Session, args []string) (*Result, error) {
	_, fl, lw, err := listArgs("metrics", args, listFlags, []string{"--json"}, 0, 0, "TICK")
	if err != nil {
		return nil, err
	}
	w := s.World()
	// The rows per rebalance, in the order they began (the meter keeps
	// them by incarnation and generation, which is that order).
	ents := w.Meter.Entries
	lo, hi := lw.rows(len(ents), func(t int) int {
		return firstAtOrAfter(len(ents), t, func(i int) int { return ents[i].FirstTick })
	})
	if err := checkRows("metrics", hi-lo, "rebalances with pauses", "metrics --last N shows the last N, --from TICK those begun from a tick on"); err != nil {
		return nil, err
	}
	// The rows per rebalance are written one by one, in the text and in
	// the JSON (where metricsJSON's own encoding has them in place of an
	// empty "pauses" list).
	m, err := buildMetrics(s, w)
	if err != nil {
		return nil, err
	}
	if fl["--json"] == "true" {
		whole := jsonLine(m)
		at := strings.Index(whole, `"pauses":[]`) + len(`"pauses":`)
		var b strings.Builder
		b.WriteString(whole[:at])
		if err := s.jsonList("metrics", &b, func(emit func(any) error) error {
			for i := lo; i < hi; i++ {
				e := ents[i]
				p := pauseJSON{Generation: e.Generation, Partitions: tpNames(e.Partitions), PartitionTicks: e.PartitionTicks}
				if clk := clockOf(w); clk.real {
					p.PartitionSeconds = clk.seconds(e.PartitionTicks)
				}
				if err := emit(p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		b.WriteString(whole[at+len("[]"):])
		line := b.String()
		return &Result{Text: line, JSON: line}, nil
	}
	t := &Table{Header: []string{"METRIC", "VALUE"}}
	clk := clockOf(w)
	// In real time, a count of partition x ticks reads as partition x
	// seconds, the ticks beside it.
	partTicks := func(n int) string { return strconv.Itoa(n) }
	if clk.real {
		t.Add("time", fmt.Sprintf("%s (tick %d, tick.ms %d)", clk.at(m.Tick), m.Tick, clk.tickMS))
		partTicks = func(n int) string { return fmt.Sprintf("%s (%d partition x ticks)", partSeconds(clk, n), n) }
	} else {
		t.Add("tick", strconv.Itoa(m.Tick))
	}
	consumer := w.Group.Type() == sim.ConsumerGroup
	if consumer {
		t.Add("group epoch (group.protocol=consumer)", strconv.Itoa(m.Generation))
	} else {
		t.Add("generation", strconv.Itoa(m.Generation))
	}
	t.Add("rebalances", strconv.Itoa(m.Rebalances))
	if clk.real {
		t.Add("pause meter (partition x seconds)", partTicks(m.PausePartitionTicks))
		t.Add("unavailable (partition x seconds)", unavailableSum(m.Summary, func(n int) string { return partSeconds(clk, n) })+
			fmt.Sprintf(" (%d partition x ticks)", m.Unavailable))
	} else {
		t.Add("pause meter ("+health.Unit+")", partTicks(m.PausePartitionTicks))
		t.Add("unavailable ("+health.Unit+")", unavailableSum(m.Summary, strconv.Itoa))
	}
	t.Add("records processed", strconv.Itoa(m.Processed))
	t.Add("duplicates ("+m.Isolation+")", strconv.Itoa(m.Duplicates)+nameList(m.DuplicateRecords))
	t.Add("lost ("+m.Isolation+")", strconv.Itoa(m.Lost)+nameList(m.LostRecords))
	t.Add("duplicates read_committed / read_uncommitted", fmt.Sprintf("%d / %d", m.DuplicatesRC, m.DuplicatesRU))
	t.Add("held back by the LSO (read_committed)", strconv.Itoa(m.HeldBack))
	if clk.real {
		t.Add("time the LSO held readers back (partition x seconds)", partTicks(m.LSOHeldTicks))
	} else {
		t.Add("ticks the LSO held readers back (partition x ticks)", partTicks(m.LSOHeldTicks))
	}
	t.Add("zombie writes", strconv.Itoa(m.ZombieWrites))
	t.Add("transactions aborted (timed out)", fmt.Sprintf("%d (%d)", m.TxnAborted, m.TxnTimedOut))
	t.Add("fenced requests", strconv.Itoa(m.Fenced))
	t.Add("external sink duplicates", strconv.Itoa(m.SinkDuplicates))
	t.Add("total lag", strconv.Itoa(m.Lag))
	t.Add("most lag (records)", m.LagLine(clk.tickAt))
	if line, ok := m.TimeLagLine(clk.dur, clk.tickAt); ok {
		t.Add("most lag (time)", line)
	}
	t.Add("members running", fmt.Sprintf("%d of %d", len(m.Health.Running), m.Health.Members))
	t.Add("health", m.Health.Words)
	text := t.Text()
	if hi > lo {
		header := []string{"GENERATION", "PAUSED", "PARTITION-TICKS"}
		if clk.real {
			header[2] = "PARTITION-SECONDS"
		}
		title := "pauses per rebalance"
		if consumer {
			header[0] = "GROUP-EPOCH"
			title = "pauses per rebalance (group epoch)"
		}
		pauses, _, err := s.render("metrics", hi-lo, header, func(emit func(...string) error) error {
			for i := lo; i < hi; i++ {
				p := ents[i]
				if err := emit(strconv.Itoa(p.Generation), strconv.Itoa(len(p.Partitions))+" "+partRuns(w, p.Partitions), partTicks(p.PartitionTicks)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		text += "\n" + title + ":\n" + pauses
	}
	text += rollsText(m.Rolls, clk)
	return &Result{Text: text, Table: t, HTML: s.htmlOf(t)}, nil
}

func cmdMembers(s *Session, args []string) (*Result, error) {
	if err := needArgs("members", args, 0, 0); err != nil {
		return nil, err
	}
	w := s.World()
	t := &Table{Header: []string{"CLIENT", "PROCESS", "MEMBER-ID", "GEN", "PHASE", "LOOP", "OWNS", "BATCH", "NOTE"}}
	if w.Group.Type() == sim.ConsumerGroup {
		t.Header[3] = "EPOCH" // a consumer-protocol member's epoch stands where a generation would
	}
	procs := append([]*sim.Member(nil), w.Processes()...)
	// Clients in natural order (C2 before C10), each client's processes in start order.
	sort.SliceStable(procs, func(i, j int) bool { return natural.Less(procs[i].Client, procs[j].Client) })
	for _, m := range procs {
		if !m.Alive && m != w.Member(m.Client) {
			continue
		}
		// A batch reads as the trace reads records: a run of more than 16
		// (a steady partition's poll) as first..last.
		recs, done := m.BatchText()
		batch := "-"
		if recs != "" {
			batch = fmt.Sprintf("%s (%d done)", recs, done)
		}
		var notes []string
		if !m.Alive && m.StoppedBy != "" {
			notes = append(notes, "stopped: "+m.StoppedBy)
		} else if !m.Alive {
			notes = append(notes, "not running")
		}
		if m.Zombie {
			notes = append(notes, "zombie")
		}
		if m.Static() {
			notes = append(notes, "static "+m.Cfg.InstanceID)
		}
		notes = append(notes, string(m.Cfg.Producer()))
		t.Add(m.Client, strconv.Itoa(m.Inc), dash(m.MemberID), strconv.Itoa(m.Generation), m.Phase.String(), m.LoopState().String(),
			partRuns(w, m.Owned), batch, strings.Join(notes, ", "))
	}
	return &Result{Text: t.Text(), Table: t, HTML: s.htmlOf(t)}, nil
}
