package draw_test

import (
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel"
	"github.com/kgrepl/kgrepl/kernel/draw"
	"github.com/kgrepl/kgrepl/sim"
)

// heartbeatWorld is the default world with a hand-built exchange of
// ConsumerGroupHeartbeat packets (KIP-848) appended to its trace, with the
// summaries the consumer protocol writes: a join, its answer with the
// assignment and the target, a fenced member, a static member whose
// instance id is still held (C2, the lane after B1's) and a leave.
func heartbeatWorld(t *testing.T) *sim.World {
	t.Helper()
	s := kernel.NewSession()
	if _, err := s.Exec("new --members 2"); err != nil {
		t.Fatal(err)
	}
	w := s.World()
	add := func(from, to string, resp bool, code sim.ErrorCode, summary string) {
		w.Packets.Append(&sim.Packet{Sent: w.Tick, Delivered: w.Tick + 1, From: from, To: to,
			Type: sim.ConsumerGroupHeartbeat, Response: resp, Error: code, Summary: summary})
	}
	add("C1", sim.Broker, false, sim.None, "epoch 0, join, subscribe orders,payments, owns -")
	add(sim.Broker, "C1", true, sim.None, "epoch 3, assigned o0 o1 o2 p0 p1, target o0 o1 o2 p0 p1 p2")
	add("C1", sim.Broker, false, sim.None, "epoch 2, owns o0 o1 o2 p0 p1 p2")
	add(sim.Broker, "C1", true, sim.FencedMemberEpoch, "C1-1 epoch 2")
	add("C2", sim.Broker, false, sim.None, "epoch 0, join, subscribe orders,payments, owns -")
	add(sim.Broker, "C2", true, sim.UnreleasedInstanceID, "instance i-2 is still held by C2-1")
	add("C2", sim.Broker, false, sim.None, "leave, epoch -2 (close)")
	return w
}

// TestSequenceConsumerHeartbeats: every ConsumerGroupHeartbeat arrow says
// its API, its error and its summary whole (wrapped between clauses, never
// cut with an ellipsis), each line fits between the two lanes, and the
// Mermaid text carries the same labels.
func TestSequenceConsumerHeartbeats(t *testing.T) {
	w := heartbeatWorld(t)
	els := parseSVG(t, draw.Sequence(w, draw.SeqOptions{To: -1, Types: []sim.API{sim.ConsumerGroupHeartbeat}}).SVG(0, 0))
	// An arrow's lines are consecutive text elements of one message group;
	// the hand-built messages alternate ends, so a change of ends starts
	// the next arrow.
	var arrows [][]string
	prev := ""
	for _, e := range els {
		if e.name != "text" || !inGroup(e, "message") || e.group["data-type"] != "ConsumerGroupHeartbeat" {
			continue
		}
		if w := draw.TextWidth(e.text, 10); w > 270 {
			t.Errorf("line %q is %.0f px wide, more than the 270 px between the lanes", e.text, w)
		}
		if strings.Contains(e.text, "…") {
			t.Errorf("line %q is cut", e.text)
		}
		k := e.group["data-from"] + ">" + e.group["data-to"]
		if k != prev {
			arrows = append(arrows, nil)
			prev = k
		}
		arrows[len(arrows)-1] = append(arrows[len(arrows)-1], e.text)
	}
	if len(arrows) != 7 {
		t.Fatalf("want 7 arrows, got %d: %q", len(arrows), arrows)
	}
	var whole []string
	for _, a := range arrows {
		whole = append(whole, strings.Join(a, " "))
		// The API name is never broken across lines.
		if !strings.HasPrefix(a[0], "ConsumerGroupHeartbeat") {
			t.Errorf("first line %q does not start with the whole API name", a[0])
		}
	}
	all := strings.Join(whole, "\n")
	for _, want := range []string{
		"ConsumerGroupHeartbeat · epoch 0, join, subscribe orders,payments, owns -",
		"ConsumerGroupHeartbeat · epoch 3, assigned o0 o1 o2 p0 p1, target o0 o1 o2 p0 p1 p2",
		"ConsumerGroupHeartbeat FENCED_MEMBER_EPOCH · C1-1 epoch 2",
		"ConsumerGroupHeartbeat UNRELEASED_INSTANCE_ID · instance i-2 is still held by C2-1",
		"ConsumerGroupHeartbeat · leave, epoch -2 (close)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no arrow reads %q; the arrows read:\n%s", want, all)
		}
	}
	mm := draw.Mermaid(w, draw.SeqOptions{To: -1, Types: []sim.API{sim.ConsumerGroupHeartbeat}})
	for _, want := range []string{
		"B1-->>C1: ConsumerGroupHeartbeat FENCED_MEMBER_EPOCH · C1-1 epoch 2",
		"C2->>B1: ConsumerGroupHeartbeat · leave, epoch -2 (close)",
	} {
		if !strings.Contains(mm, want) {
			t.Errorf("Mermaid has no line %q:\n%s", want, mm)
		}
	}
}

// TestWorldDiagramConsumerGroup: the world diagram of a consumer group
// names its group epoch in the title, the coordinator's epochs and
// server-side assignor, each member's epoch and, while it reconciles, its
// target; member boxes say epoch where a classic member says gen.
func TestWorldDiagramConsumerGroup(t *testing.T) {
	s := kernel.NewSession()
	if _, err := s.Exec("new --members 2"); err != nil {
		t.Fatal(err)
	}
	w := s.World()
	g := w.Group.Describe()
	g.Type, g.State, g.GroupEpoch, g.AssignmentEpoch, g.Assignor, g.Leader = sim.ConsumerGroup, sim.Reconciling, 3, 3, "uniform", ""
	ms := g.Members
	ms[0].MemberEpoch, ms[1].MemberEpoch = 2, 3
	ms[0].Target = ms[0].Assignment[:1]
	ms[1].Target = ms[1].Assignment
	w.Group.Hooks().SetConsumerGroup(g)
	var texts []string
	for _, e := range parseSVG(t, draw.World(w, draw.WorldOptions{}).SVG(0, 0)) {
		if e.name == "text" {
			texts = append(texts, e.text)
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{
		"group billing · tick 0 · Reconciling · group epoch 3",
		"state Reconciling · group epoch 3 · target assignment epoch 3 · assignor uniform",
		"C1-1 e2 " + w.Layout().PartList(ms[0].Assignment) + " → " + w.Layout().PartList(ms[0].Target),
		"C2-1 e3 " + w.Layout().PartList(ms[1].Assignment),
		"epoch 1 · ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in the diagram:\n%s", want, all)
		}
	}
	if strings.Contains(all, "C2-1 e3 "+w.Layout().PartList(ms[1].Assignment)+" →") {
		t.Errorf("C2-1 has reached its target; no arrow wanted")
	}
	if strings.Contains(all, "generation") || strings.Contains(all, "gen 1") {
		t.Errorf("a consumer group's diagram speaks of generations:\n%s", all)
	}
}

// TestSequenceConsumerRun: a real consumer-protocol run (a join, a static
// restart, a crash) draws every heartbeat's label whole within its lanes.
func TestSequenceConsumerRun(t *testing.T) {
	s := kernel.NewSession()
	for _, c := range []string{"set group.protocol consumer", "new --members 2 --keep-settings", "join C3 --static",
		"run until stable", "restart C3", "run until stable", "crash C1 now", "run until stable"} {
		if _, err := s.Exec(c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	w := s.World()
	opt := draw.SeqOptions{To: -1, Types: []sim.API{sim.ConsumerGroupHeartbeat}}
	lane := map[string]int{}
	for i, l := range draw.Lanes(w, draw.Messages(w, opt)) {
		lane[l] = i
	}
	n := 0
	for _, e := range parseSVG(t, draw.Sequence(w, opt).SVG(0, 0)) {
		if e.name != "text" || !inGroup(e, "message") {
			continue
		}
		n++
		// Lanes are 270 px apart; a label has the span between its two.
		d := lane[e.group["data-from"]] - lane[e.group["data-to"]]
		if d < 0 {
			d = -d
		}
		if tw := draw.TextWidth(e.text, 10); tw > float64(270*d) || strings.Contains(e.text, "…") {
			t.Errorf("heartbeat label line %q (%.0f px) is cut or wider than its %d px between the lanes", e.text, tw, 270*d)
		}
	}
	if n < len(draw.Messages(w, opt)) {
		t.Errorf("%d label lines for %d heartbeats", n, len(draw.Messages(w, opt)))
	}
}
