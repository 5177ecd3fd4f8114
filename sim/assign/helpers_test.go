package assign

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// mem is a dynamic member with no ownership (generation -1).
func mem(id string, topics ...string) Member {
	return Member{MemberID: id, Topics: topics, Generation: -1}
}

// static is a static member (group.instance.id set).
func static(id, instance string, topics ...string) Member {
	m := mem(id, topics...)
	m.InstanceID = instance
	return m
}

// owning returns m claiming the partitions in spec at generation gen.
func owning(m Member, gen int, spec string) Member {
	m.Owned = tps(spec)
	m.Generation = gen
	return m
}

// tps parses "t1-0 t1-1 orders-2" (or with commas, as Kafka's tests print);
// an empty spec gives an empty, non-nil list.
func tps(spec string) []TopicPartition {
	ps, err := ParsePartitions(spec)
	if err != nil {
		panic(err)
	}
	if ps == nil {
		ps = []TopicPartition{}
	}
	return ps
}

func spell(ps []TopicPartition) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}

// canon sorts a spec, so expectations can be written in any order.
func canon(spec string) string {
	ps := tps(spec)
	SortPartitions(ps)
	return spell(ps)
}

func spellAll(a Assignment) string {
	ids := make([]string, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s {%s} ", id, spell(a[id]))
	}
	return b.String()
}

// expect checks got has exactly the members of want, with exactly those
// partitions (want's specs may be in any order).
func expect(t *testing.T, got Assignment, want map[string]string) {
	t.Helper()
	w := Assignment{}
	for id, spec := range want {
		w[id] = tps(canon(spec))
	}
	if spellAll(got) != spellAll(w) {
		t.Errorf("assignment\n got: %s\nwant: %s", spellAll(got), spellAll(w))
	}
}

// parts gives p(topic, from..to) as a spec.
func parts(topic string, from, to int) string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, topic+"-"+strconv.Itoa(i))
	}
	return strings.Join(s, " ")
}

// checkValid checks what every Assignment must satisfy: an entry for every
// member (non-nil), each sorted by (topic, partition) without repeats, no
// partition given twice, only existing partitions of subscribed topics.
func checkValid(t *testing.T, in Input, got Assignment) {
	t.Helper()
	if len(got) != len(in.Members) {
		t.Fatalf("%d entries for %d members: %s", len(got), len(in.Members), spellAll(got))
	}
	owner := map[TopicPartition]string{}
	for _, m := range in.Members {
		ps, ok := got[m.MemberID]
		if !ok || ps == nil {
			t.Fatalf("member %s: no entry (or nil)", m.MemberID)
		}
		for i, p := range ps {
			if i > 0 && !ps[i-1].Less(p) {
				t.Fatalf("member %s: not sorted or repeated: %s", m.MemberID, spell(ps))
			}
			if o, dup := owner[p]; dup {
				t.Fatalf("%s given to %s and %s", p, o, m.MemberID)
			}
			owner[p] = m.MemberID
			if !slices.Contains(m.Topics, p.Topic) {
				t.Fatalf("member %s got %s but does not subscribe to %s", m.MemberID, p, p.Topic)
			}
			if n, ok := in.Partitions[p.Topic]; !ok || p.Partition < 0 || p.Partition >= n {
				t.Fatalf("member %s got nonexistent %s", m.MemberID, p)
			}
		}
	}
}

// checkComplete checks every partition of every topic someone subscribes to
// is assigned (checkValid already rules out twice).
func checkComplete(t *testing.T, in Input, got Assignment) {
	t.Helper()
	n := 0
	for _, ps := range got {
		n += len(ps)
	}
	if want := subscribedPartitions(in); n != want {
		t.Fatalf("%d partitions assigned, want %d: %s", n, want, spellAll(got))
	}
}

func subscribedPartitions(in Input) int {
	seen := map[string]bool{}
	total := 0
	for _, m := range in.Members {
		for _, tp := range m.Topics {
			if n, ok := in.Partitions[tp]; ok && !seen[tp] {
				seen[tp] = true
				total += max(n, 0)
			}
		}
	}
	return total
}

func counts(got Assignment) (lo, hi int) {
	lo, hi = -1, -1
	for _, ps := range got {
		if lo < 0 || len(ps) < lo {
			lo = len(ps)
		}
		hi = max(hi, len(ps))
	}
	return lo, hi
}

// checkBalanced: counts differ by at most one.
func checkBalanced(t *testing.T, got Assignment) {
	t.Helper()
	if lo, hi := counts(got); hi-lo > 1 {
		t.Fatalf("unbalanced (%d..%d): %s", lo, hi, spellAll(got))
	}
}

// checkNoBetterMove is the balance criterion of Kafka's sticky assignors:
// no member with at least two fewer partitions than another subscribes to
// the topic of any partition of that other member.
func checkNoBetterMove(t *testing.T, in Input, got Assignment) {
	t.Helper()
	for _, a := range in.Members {
		for _, b := range in.Members {
			if len(got[a.MemberID])-len(got[b.MemberID]) < 2 {
				continue
			}
			for _, p := range got[a.MemberID] {
				if slices.Contains(b.Topics, p.Topic) {
					t.Fatalf("%s (%d) could give %s to %s (%d): %s", a.MemberID, len(got[a.MemberID]), p,
						b.MemberID, len(got[b.MemberID]), spellAll(got))
				}
			}
		}
	}
}

// nextRound is the input of the next rebalance: every member owns what it
// got, at generation gen.
func nextRound(in Input, got Assignment, gen int) Input {
	out := Input{Partitions: in.Partitions, Members: make([]Member, len(in.Members))}
	for i, m := range in.Members {
		m.Owned = slices.Clone(got[m.MemberID])
		m.Generation = gen
		out.Members[i] = m
	}
	return out
}

// revoked counts the partitions members own but are not assigned: under the
// cooperative protocol, the partitions paused by this round.
func revoked(in Input, got Assignment) int {
	n := 0
	for _, m := range in.Members {
		for _, p := range m.Owned {
			if !slices.Contains(got[m.MemberID], p) {
				n++
			}
		}
	}
	return n
}

// cooperativeRounds runs cooperative rebalances until a round revokes
// nothing (at most limit rounds), checking every round never hands out a
// partition its owner is revoking in the same round, as Kafka's
// CooperativeStickyAssignorTest does. It returns the final input and result.
func cooperativeRounds(t *testing.T, a Assignor, in Input, gen, limit int) (Input, Assignment) {
	t.Helper()
	for round := 1; ; round++ {
		got := a.Assign(in)
		checkValid(t, in, got)
		added := map[TopicPartition]bool{}
		for _, m := range in.Members {
			for _, p := range got[m.MemberID] {
				if !slices.Contains(m.Owned, p) {
					added[p] = true
				}
			}
		}
		for _, m := range in.Members {
			for _, p := range m.Owned {
				if added[p] && !slices.Contains(got[m.MemberID], p) {
					t.Fatalf("round %d: %s revoked from %s and handed out in the same round", round, p, m.MemberID)
				}
			}
		}
		if revoked(in, got) == 0 {
			return in, got
		}
		if round == limit {
			t.Fatalf("still revoking after %d rounds: %s", limit, spellAll(got))
		}
		in = nextRound(in, got, gen+round)
	}
}

// allAssignors gives every strategy with every rule set, named.
func allAssignors(t testing.TB) map[string]Assignor {
	out := map[string]Assignor{}
	for _, name := range Strategies {
		for _, rules := range []StickyRules{SeedRules, KafkaRules} {
			a, err := New(name, rules)
			if err != nil {
				t.Fatal(err)
			}
			key := name
			if name == "sticky" || name == "cooperative-sticky" {
				key += "/" + rules.String()
			}
			out[key] = a
		}
	}
	return out
}

var (
	seedEager  = stickyAssignor{rules: SeedRules}
	kafkaEager = stickyAssignor{rules: KafkaRules}
	seedCoop   = cooperativeStickyAssignor{rules: SeedRules}
	kafkaCoop  = cooperativeStickyAssignor{rules: KafkaRules}
)
