package kernel

// The `trace` view: the packets and events of the world's history,
// filtered by type, member and window.

import (
	"fmt"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/natural"
	"github.com/kgrepl/kgrepl/sim"
)

type packetJSON struct {
	Sent      int     `json:"sent"`
	Delivered *int    `json:"delivered"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Type      string  `json:"type"`
	Response  bool    `json:"response"`
	Error     *string `json:"error"`
	Summary   string  `json:"summary"`
	Lost      bool    `json:"lost"`
	// In real time (time ms), the ticks as milliseconds from the world's
	// start; absent on the page's scale.
	SentMS      *int64 `json:"sent_ms,omitempty"`
	DeliveredMS *int64 `json:"delivered_ms,omitempty"`
}

func cmdTrace(s *Session, args []string) (*Result, error) {
	pos, fl, lw, err := listArgs("trace", args, []string{"--type", "--member", "--from"}, []string{"--json", "--events"}, 0, 1, "TICK")
	if err != nil {
		return nil, err
	}
	w := s.World()
	note := ""
	if lw.hasFrom {
		// Ticks the world let go (history.ms) are made again by replaying.
		if w, note, err = s.detailWorld("trace --from", lw.from); err != nil {
			return nil, err
		}
	}
	clk := clockOf(w)
	if len(pos) == 1 {
		if lw.last, err = parseCount("trace", "N", pos[0], 1, 100_000_000); err != nil {
			return nil, err
		}
	}
	pkts, err := s.filterPackets(w, fl["--type"], fl["--member"], lw)
	if err != nil {
		return nil, err
	}
	events := fl["--events"] == "true"
	evLo, evHi := firstKeptEvent(w), w.Events.Len()
	if events {
		if lw.hasFrom {
			evLo = eventAtOrAfter(w, lw.from)
		}
		n := evHi - evLo
		if err := limitTraceRows.checkf("trace --events", n, fmt.Sprintf("%d events", n)); err != nil {
			return nil, err
		}
	}
	if fl["--json"] == "true" {
		// {"packets":[...]} and with --events ,"events":[...], written
		// item by item.
		var b strings.Builder
		b.WriteString(`{"packets":`)
		if err := s.jsonList("trace", &b, func(emit func(any) error) error {
			for j := range pkts.len() {
				p := w.Packets.At(pkts.at(j))
				pj := packetJSON{Sent: p.Sent, From: p.From, To: p.To, Type: string(p.Type), Response: p.Response, Summary: p.Summary, Lost: p.Lost}
				if clk.real {
					ms := clk.ms(p.Sent)
					pj.SentMS = &ms
				}
				if p.Delivered >= 0 {
					d := p.Delivered
					pj.Delivered = &d
					if clk.real {
						ms := clk.ms(d)
						pj.DeliveredMS = &ms
					}
				}
				if p.Error != sim.None {
					e := p.Error.String()
					pj.Error = &e
				}
				if err := emit(pj); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if events {
			b.WriteString(`,"events":`)
			if err := s.jsonList("trace", &b, func(emit func(any) error) error {
				for i := evLo; i < evHi; i++ {
					e := w.Events.At(i)
					m := &e.Member
					if e.Member == "" {
						m = nil // the coordinator's
					}
					if err := emit(eventJSON{Tick: e.Tick, Kind: string(e.Kind), Member: m, Text: e.Text, Stop: e.Stop}); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return nil, err
			}
		}
		b.WriteByte('}')
		line := b.String()
		return &Result{Text: line, JSON: line}, nil
	}
	// In real time a tick reads as its time, the tick beside it.
	at := clk.cell
	text, t, err := s.render("trace", pkts.len(), []string{"SENT", "DELIVERED", "FROM", "TO", "TYPE", "ERROR", "DETAIL"}, func(emit func(...string) error) error {
		for j := range pkts.len() {
			p := w.Packets.At(pkts.at(j))
			del := "in flight"
			if p.Lost {
				del = "lost"
			} else if p.Delivered >= 0 {
				del = at(p.Delivered)
			}
			typ := string(p.Type)
			if p.Response && p.Type != sim.RebalanceNotification {
				typ += " response"
			}
			errs := "-"
			if p.Error != sim.None {
				errs = fmt.Sprintf("%s (%d)", p.Error, int(p.Error))
			}
			if err := emit(at(p.Sent), del, p.From, p.To, typ, errs, p.Summary); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if events {
		// A line an event, measured before it is written, as render does.
		line := func(e sim.Event) string { return clk.stamp(e.Tick) + " " + clk.annotate(e.Text) + "\n" }
		size := len(text) + len("\nevents:\n")
		for i := evLo; i < evHi; i++ {
			if err := s.pollRow("trace", i-evLo); err != nil {
				return nil, err
			}
			size += len(line(w.Events.At(i)))
		}
		if err := limitViewBytes.check("trace --events", size); err != nil {
			return nil, fmt.Errorf("%w: its text would be %s bytes (trace N or --from narrow it)", err, group(size))
		}
		var b strings.Builder
		b.Grow(size)
		b.WriteString(text)
		b.WriteString("\nevents:\n")
		for i := evLo; i < evHi; i++ {
			if err := s.pollRow("trace", i-evLo); err != nil {
				return nil, err
			}
			b.WriteString(line(w.Events.At(i)))
		}
		text = b.String()
	}
	if note == "" && !lw.hasFrom && (lw.last == 0 || pkts.len() < lw.last) {
		// The listing reaches back to the window's start: say so.
		note = windowNote(w)
	}
	if note != "" {
		text += "\n" + note
	}
	return &Result{Text: text, Table: t, HTML: s.htmlOf(t)}, nil
}

// eventJSON is one event in trace --events --json.
type eventJSON struct {
	Tick   int     `json:"tick"`
	Kind   string  `json:"kind"`
	Member *string `json:"member"` // a client id; null for the coordinator
	Text   string  `json:"text"`
	Stop   bool    `json:"stop"`
}

// packetSet is the packets a trace view lists: a run of the trace
// [lo, hi), or, when a filter picked them, their indexes.
type packetSet struct {
	lo, hi int
	idx    []int
	picked bool
}

func (ps packetSet) len() int {
	if ps.picked {
		return len(ps.idx)
	}
	return ps.hi - ps.lo
}

// at is the trace index of the set's j-th packet.
func (ps packetSet) at(j int) int {
	if ps.picked {
		return ps.idx[j]
	}
	return ps.lo + j
}

// filterPackets keeps the packets of the named types (comma-separated) to
// or from a member, sent at --from's tick or later, the last --last (trace
// N) of them; empty filters keep everything. What it keeps is counted
// against limitTraceRows before any packet is made: a trace is kept as
// compact records, and a view of every packet of a long run would build
// each one. A filter reads the packets' headers only (no texts), looking
// for Ctrl-C as it goes.
func (s *Session) filterPackets(w *sim.World, types, member string, lw listWindow) (packetSet, error) {
	want := map[sim.API]bool{}
	if types != "" {
		for _, t := range strings.Split(types, ",") {
			found := false
			for _, a := range sim.APIs {
				if strings.EqualFold(string(a), t) {
					want[a], found = true, true
				}
			}
			if !found {
				var names []string
				for _, a := range sim.APIs {
					names = append(names, string(a))
				}
				return packetSet{}, fmt.Errorf("trace --type: no message type %q (types: %s)", t, strings.Join(names, " "))
			}
		}
	}
	if member != "" && w.Member(member) == nil {
		return packetSet{}, fmt.Errorf("trace --member: no member %s (members: %s)", member, strings.Join(natural.Sorted(w.Clients()), " "))
	}
	keep := func(n int) error {
		return limitTraceRows.checkf("trace", n, fmt.Sprintf("%d messages (trace N shows the last N, --from TICK those sent from a tick on; --type and --member narrow it)", n))
	}
	n := w.Packets.Len()
	from := firstKeptPacket(w)
	if lw.hasFrom {
		from = packetAtOrAfter(w, lw.from)
	}
	if len(want) == 0 && member == "" {
		lo, hi := listWindow{last: lw.last}.rows(n, nil)
		lo = max(lo, from)
		if err := keep(hi - lo); err != nil {
			return packetSet{}, err
		}
		return packetSet{lo: lo, hi: hi}, nil
	}
	// Only the indexes that can be shown are kept (the last --last, and no
	// more than the bound allows): the others are counted.
	most := limitTraceRows.max + 1
	if lw.last > 0 {
		most = min(lw.last, most)
	}
	var idx []int
	matched := 0
	for i, p := range w.Packets.Headers(from) {
		if err := s.pollRow("trace", i-from); err != nil {
			return packetSet{}, err
		}
		if len(want) > 0 && !want[p.Type] {
			continue
		}
		if member != "" && p.From != member && p.To != member {
			continue
		}
		matched++
		if idx = append(idx, i); len(idx) >= 2*most {
			idx = append(idx[:0], idx[len(idx)-most:]...)
		}
	}
	if len(idx) > most {
		idx = idx[len(idx)-most:]
	}
	if lw.last > 0 {
		matched = min(matched, lw.last)
	}
	if err := keep(matched); err != nil {
		return packetSet{}, err
	}
	return packetSet{idx: idx, picked: true}, nil
}
