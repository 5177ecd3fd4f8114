package kafkafmt

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// genGroups makes random groups as a cluster could hold them: classic or
// consumer protocol, any state, members with client ids that hold spaces
// and non-ASCII (astral too, two UTF-16 units each, which is how Java pads
// them), static or dynamic, assignments over several topics, offsets with
// 19-digit values that overflow their 15-wide columns, coordinators and
// assignor names that overflow theirs. spaces says whether a value holds a
// space (then a squeezed copy cannot be read back).
func genGroups(r *rand.Rand, v kafkaVersion) (groups []Group, spaces bool) {
	n := 1 + r.IntN(3)
	used := map[string]bool{}
	for len(groups) < n {
		g := genGroup(r, v, &spaces)
		if !used[g.ID] {
			used[g.ID] = true
			groups = append(groups, g)
		}
	}
	return groups, spaces
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func genName(r *rand.Rand, alphabet string, min, max int) string {
	n := min + r.IntN(max-min+1)
	a := []rune(alphabet)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(a[r.IntN(len(a))])
	}
	return b.String()
}

const legal = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

func genGroup(r *rand.Rand, v kafkaVersion, spaces *bool) Group {
	g := Group{ID: genName(r, legal+"éß𝔤", 1, 30)}
	consumer := v >= v38 && r.IntN(2) == 0
	states := []string{StateStable, StateStable, StatePreparingRebalance, StateCompletingRebalance, StateEmpty, StateDead}
	if consumer {
		g.Protocol = ProtocolConsumer
		states = []string{StateStable, StateStable, StateAssigning, StateReconciling, StateEmpty, StateDead}
	} else if v >= v40 {
		g.Protocol = ProtocolClassic
	}
	g.State = pick(r, states...)
	g.Rebalancing = rebalancingState(g.State)
	coordHost := pick(r, "localhost", "b1", "kafka-0.kafka-headless.kafka.svc.cluster.local", genName(r, "abcdefghijklmnopqrstuvwxyz.-", 1, 40))
	g.Coordinator = some(Coordinator{Host: coordHost, Port: 1 + r.IntN(65535), ID: int32(r.IntN(100))})
	g.Assignor = pick(r, "", "range", "roundrobin", "sticky", "cooperative-sticky", "com.example.kafka.AVeryLongCustomAssignorName")
	if consumer {
		g.Assignor = pick(r, "uniform", "range")
		g.GroupEpoch, g.TargetAssignmentEpoch = some(int32(r.IntN(1000))), some(int32(r.IntN(1000)))
	}
	if g.State == StateDead {
		g.Coordinator, g.Assignor = Opt[Coordinator]{}, ""
		g.GroupEpoch, g.TargetAssignmentEpoch = Opt[int32]{}, Opt[int32]{}
		return g
	}
	var topics []string
	for i, nt := 0, 1+r.IntN(3); i < nt; i++ {
		topics = append(topics, genName(r, legal, 1, 20)+fmt.Sprint(i))
	}
	var all []TopicPartition
	for _, t := range topics {
		for p := int32(0); p < int32(1+r.IntN(14)); p++ {
			all = append(all, TopicPartition{t, p})
		}
	}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	nm := 1 + r.IntN(5)
	if g.State == StateEmpty {
		nm = 0
	}
	owner := map[TopicPartition]int{}
	for i := 0; i < nm; i++ {
		client := pick(r, "consumer-"+g.ID+"-"+fmt.Sprint(i+1), genName(r, legal, 1, 25), "orders app "+fmt.Sprint(i), "clïent-ü", "𝒸𝓁𝒾ℯ𝓃𝓉")
		if strings.Contains(client, " ") {
			*spaces = true
		}
		m := Member{ClientID: client, Host: pick(r, "/10.0.0."+fmt.Sprint(r.IntN(256)), "worker-"+fmt.Sprint(i)+".example.com/10.1.2."+fmt.Sprint(r.IntN(256)))}
		if consumer && r.IntN(3) > 0 {
			m.ConsumerID = genName(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", 22, 22)
		} else {
			m.ConsumerID = client + "-" + genName(r, "0123456789abcdef", 8, 8) + "-4c1e-9d0a-" + genName(r, "0123456789abcdef", 12, 12)
		}
		if r.IntN(3) == 0 {
			m.GroupInstanceID = genName(r, legal, 1, 20) + fmt.Sprint(i)
		}
		g.Members = append(g.Members, m)
	}
	if g.State == StateEmpty || nm == 0 {
		g.Members = nil
	}
	// Current assignments: a random owner (or none) for each partition.
	cur := make([][]TopicPartition, nm)
	for _, tp := range all {
		if nm > 0 && r.IntN(4) > 0 {
			i := r.IntN(nm)
			cur[i] = append(cur[i], tp)
			owner[tp] = i
		}
	}
	tgt := make([][]TopicPartition, nm)
	for _, tp := range all {
		if nm > 0 && r.IntN(4) > 0 {
			i := r.IntN(nm)
			tgt[i] = append(tgt[i], tp)
		}
	}
	for i := range g.Members {
		m := &g.Members[i]
		sortTPs(cur[i])
		sortTPs(tgt[i])
		m.Partitions = len(cur[i])
		m.Assignment = some(append([]TopicPartition{}, cur[i]...))
		m.Target = some([]TopicPartition{})
		if consumer {
			m.Target = some(append([]TopicPartition{}, tgt[i]...))
			m.CurrentEpoch = some(int32(r.IntN(1000)))
			m.TargetEpoch = g.TargetAssignmentEpoch
			m.Upgraded = some(r.IntN(3) > 0)
		}
	}
	g.NumMembers = some(len(g.Members))
	// Offsets in Kafka's order: members by partition count (most first),
	// each one's partitions by number, then partitions no member holds.
	order := make([]int, nm)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(cur[order[a]]) > len(cur[order[b]]) })
	offset := func(tp TopicPartition, m *Member) Offset {
		o := Offset{TopicPartition: tp, LogEndOffset: some(int64(r.IntN(1_000_000)))}
		if r.IntN(20) == 0 {
			o.LogEndOffset = some(int64(1_000_000_000_000_000_000 + r.IntN(1000))) // 19 digits
		}
		if r.IntN(5) > 0 {
			c := o.LogEndOffset.V - int64(r.IntN(1000))
			if c < 0 {
				c = 0
			}
			o.CurrentOffset, o.Lag = some(c), some(o.LogEndOffset.V-c)
		}
		if v >= v40 && o.CurrentOffset.Valid && r.IntN(2) == 0 {
			o.LeaderEpoch = some(int32(r.IntN(50)))
		}
		if m != nil {
			o.ConsumerID, o.Host, o.ClientID = m.ConsumerID, m.Host, m.ClientID
		}
		return o
	}
	for _, i := range order {
		if g.Members == nil {
			break
		}
		held := append([]TopicPartition(nil), cur[i]...)
		sort.SliceStable(held, func(a, b int) bool { return held[a].Partition < held[b].Partition })
		for _, tp := range held {
			g.Offsets = append(g.Offsets, offset(tp, &g.Members[i]))
		}
	}
	for _, tp := range all {
		if _, held := owner[tp]; !held && r.IntN(2) == 0 {
			g.Offsets = append(g.Offsets, offset(tp, nil))
		}
	}
	return g
}

type scenario struct {
	name  string
	parts []fixturePart
}

// scenarios: what a user may paste, per version.
func scenarios(v kafkaVersion) []scenario {
	s := []scenario{
		{"offsets", []fixturePart{{modeOffsets, false, nil}}},
		{"members", []fixturePart{{modeMembers, false, nil}}},
		{"state", []fixturePart{{modeState, false, nil}}},
		{"all", []fixturePart{{modeState, true, nil}, {modeMembers, true, nil}, {modeOffsets, true, nil}}},
	}
	if v != v38 {
		s = append(s, scenario{"members-verbose", []fixturePart{{modeMembers, true, nil}}})
	}
	return s
}

func render(v kafkaVersion, sc scenario, groups []Group) string {
	var b strings.Builder
	for _, p := range sc.parts {
		b.WriteString(printDescribe(v, p.mode, p.verbose, groups))
		b.WriteString("\n")
	}
	return b.String()
}

// shown is what a scenario's text says of each group: the tool prints
// nothing for a group with nothing to show (no rows and no line about it).
func shown(v kafkaVersion, sc scenario, g Group) bool {
	if g.State != StateStable {
		return true
	}
	for _, p := range sc.parts {
		switch p.mode {
		case modeState:
			return true
		case modeOffsets:
			if len(g.Offsets) > 0 {
				return true
			}
		case modeMembers:
			if len(g.Members) > 0 {
				return true
			}
		}
	}
	return false
}

var squeeze = regexp.MustCompile(` +`)

// TestDescribeRoundTrip: random groups printed as each Kafka version prints
// them read back to the same groups, and print the same again; with the
// spaces squeezed out (a paste through a chat) they read the same too.
func TestDescribeRoundTrip(t *testing.T) {
	iterations := 150
	if testing.Short() {
		iterations = 50
	}
	for _, v := range allVersions {
		for _, sc := range scenarios(v) {
			t.Run(v.String()+"/"+sc.name, func(t *testing.T) {
				for seed := uint64(0); seed < uint64(iterations); seed++ {
					r := rand.New(rand.NewPCG(seed, uint64(v)))
					groups, spaces := genGroups(r, v)
					var want []Group
					for _, g := range groups {
						if shown(v, sc, g) {
							want = append(want, g)
						}
					}
					text := render(v, sc, groups)
					got, byWords, err := parseDescribe(strings.NewReader(text), describeLimits{MaxDescribeBytes, MaxDescribeLineBytes, MaxDescribeRows, MaxAssignedPartitions})
					if len(want) == 0 {
						if err == nil || !strings.Contains(err.Error(), "no group found") {
							t.Fatalf("seed %d: nothing shown, got %v\n%s", seed, err, text)
						}
						continue
					}
					if err != nil {
						t.Fatalf("seed %d: %v\n%s", seed, err, text)
					}
					if byWords != 0 {
						t.Fatalf("seed %d: %d rows were read by words, not where the header puts the columns:\n%s", seed, byWords, text)
					}
					if again := render(v, sc, got); again != text {
						t.Fatalf("seed %d: printed again differs:\n--- first\n%s\n--- again\n%s", seed, text, again)
					}
					compareGroups(t, seed, v, sc, want, got)
					if !spaces {
						sq := squeeze.ReplaceAllString(text, " ")
						got2, err := ParseDescribe(strings.NewReader(sq))
						if err != nil {
							t.Fatalf("seed %d: squeezed: %v\n%s", seed, err, sq)
						}
						if a, b := maskFormats(dumpGroups(got)), maskFormats(dumpGroups(got2)); a != b {
							t.Fatalf("seed %d: squeezed reads differently:\n%s\n--- squeezed\n%s\n--- text\n%s", seed, a, b, sq)
						}
					}
				}
			})
		}
	}
}

var formatRE = regexp.MustCompile(`"Kafka [^"]*"`)

func maskFormats(s string) string { return formatRE.ReplaceAllString(s, `"Kafka"`) }

// compareGroups checks the fields a scenario shows against the groups
// printed (the round trip alone would not see a field both the printer and
// the parser lose).
func compareGroups(t *testing.T, seed uint64, v kafkaVersion, sc scenario, want, got []Group) {
	t.Helper()
	byID := map[string]Group{}
	for _, g := range got {
		byID[g.ID] = g
	}
	if len(got) != len(want) {
		t.Fatalf("seed %d: %d groups read, %d printed", seed, len(got), len(want))
	}
	for _, w := range want {
		g, ok := byID[w.ID]
		if !ok {
			t.Fatalf("seed %d: group %q not read", seed, w.ID)
		}
		for _, p := range sc.parts {
			switch p.mode {
			case modeState:
				if w.State != StateDead && (g.State != w.State || g.Assignor != w.Assignor || g.Coordinator != w.Coordinator || g.NumMembers != w.NumMembers) {
					t.Fatalf("seed %d: state of %q: got %+v, want %+v", seed, w.ID, g, w)
				}
			case modeMembers:
				if w.State == StateDead || w.State == StateEmpty {
					continue
				}
				if len(g.Members) != len(w.Members) {
					t.Fatalf("seed %d: %q: %d members read, %d printed", seed, w.ID, len(g.Members), len(w.Members))
				}
				for i, wm := range w.Members {
					gm := g.Members[i]
					if gm.ConsumerID != wm.ConsumerID || gm.ClientID != wm.ClientID || gm.Host != wm.Host ||
						gm.GroupInstanceID != wm.GroupInstanceID || gm.Partitions != wm.Partitions {
						t.Fatalf("seed %d: member %d of %q: got %+v, want %+v", seed, i, w.ID, gm, wm)
					}
					if p.verbose && tpsText(gm.Assignment.V) != tpsText(wm.Assignment.V) {
						t.Fatalf("seed %d: member %q: assignment %s, want %s", seed, wm.ConsumerID, tpsText(gm.Assignment.V), tpsText(wm.Assignment.V))
					}
					if p.verbose && v >= v40 && (tpsText(gm.Target.V) != tpsText(wm.Target.V) || gm.CurrentEpoch != wm.CurrentEpoch) {
						t.Fatalf("seed %d: member %q: target %s epoch %v, want %s %v", seed, wm.ConsumerID, tpsText(gm.Target.V), gm.CurrentEpoch, tpsText(wm.Target.V), wm.CurrentEpoch)
					}
				}
			case modeOffsets:
				if w.State == StateDead {
					continue
				}
				if len(g.Offsets) != len(w.Offsets) {
					t.Fatalf("seed %d: %q: %d offsets read, %d printed", seed, w.ID, len(g.Offsets), len(w.Offsets))
				}
				for i, wo := range w.Offsets {
					if !p.verbose || v < v40 {
						wo.LeaderEpoch = Opt[int32]{}
					}
					go_ := g.Offsets[i]
					go_.Line = 0
					if go_ != wo {
						t.Fatalf("seed %d: offset %d of %q: got %+v, want %+v", seed, i, w.ID, go_, wo)
					}
				}
			}
		}
	}
}
