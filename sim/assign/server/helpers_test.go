package server

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// topics parses "name:partitions ..." into topic metadata with ids derived
// from the names.
func topics(spec string) []Topic {
	var out []Topic
	for _, f := range strings.Fields(spec) {
		name, n, _ := strings.Cut(f, ":")
		p, err := strconv.Atoi(n)
		if err != nil {
			panic(fmt.Sprintf("bad topic spec %q", f))
		}
		out = append(out, Topic{Name: name, Partitions: p})
	}
	return out
}

// tps parses "t-0 t-1 u-3" into partitions.
func tps(spec string) []assign.TopicPartition {
	ps, err := assign.ParsePartitions(spec)
	if err != nil {
		panic(err)
	}
	return ps
}

// member builds a member: id, instance id, subscribed names, current assignment.
func member(id, instance, subs, assigned string) Member {
	return Member{MemberID: id, InstanceID: instance, Topics: strings.Fields(subs), Assigned: tps(assigned)}
}

// render prints an assignment member by member in sorted member order.
func render(a assign.Assignment) string {
	ids := make([]string, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		var ps []string
		for _, p := range a[id] {
			ps = append(ps, p.String())
		}
		fmt.Fprintf(&b, "%s: %s\n", id, strings.Join(ps, " "))
	}
	return b.String()
}

// want renders expected answers given as member → "t-0 t-1".
func want(m map[string]string) string {
	a := assign.Assignment{}
	for id, ps := range m {
		a[id] = tps(ps)
	}
	return render(a)
}

// mustAssign runs an assignor and fails the test on error.
func mustAssign(t *testing.T, as Assignor, in Input) assign.Assignment {
	t.Helper()
	out, err := as.Assign(in)
	if err != nil {
		t.Fatalf("%s: %v", as.Name(), err)
	}
	return out
}

// checkValid checks that every partition of a topic somebody subscribes to
// is assigned exactly once, and only to a subscriber, and that every member
// has an entry.
func checkValid(t *testing.T, in Input, out assign.Assignment) {
	t.Helper()
	parts := map[string]int{}
	for _, tp := range in.Topics {
		parts[tp.Name] = tp.Partitions
	}
	subscribed := map[string]map[string]bool{}
	for _, m := range in.Members {
		subscribed[m.MemberID] = map[string]bool{}
		for _, n := range m.Topics {
			subscribed[m.MemberID][n] = true
		}
		if _, ok := out[m.MemberID]; !ok {
			t.Errorf("member %s has no entry", m.MemberID)
		}
	}
	owner := map[assign.TopicPartition]string{}
	for id, ps := range out {
		if subscribed[id] == nil {
			t.Errorf("assignment names unknown member %s", id)
		}
		for _, p := range ps {
			if !subscribed[id][p.Topic] {
				t.Errorf("%s got %s without subscribing to %s", id, p, p.Topic)
			}
			if p.Partition < 0 || p.Partition >= parts[p.Topic] {
				t.Errorf("%s got %s, which does not exist", id, p)
			}
			if o, dup := owner[p]; dup {
				t.Errorf("%s is assigned to both %s and %s", p, o, id)
			}
			owner[p] = id
		}
	}
	for _, tp := range in.Topics {
		anyone := false
		for _, m := range in.Members {
			anyone = anyone || subscribed[m.MemberID][tp.Name]
		}
		for p := 0; anyone && p < tp.Partitions; p++ {
			if _, ok := owner[assign.TopicPartition{Topic: tp.Name, Partition: p}]; !ok {
				t.Errorf("%s-%d is subscribed to but unassigned", tp.Name, p)
			}
		}
	}
}
