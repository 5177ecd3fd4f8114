package assign

import (
	"bufio"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
)

// SelectProtocol agrees with Kafka's ClassicGroup.selectProtocol on every
// group of the fixture (see its header), ties included, and its answer
// does not depend on the order of the members.
func TestSelectProtocolMatchesKafka(t *testing.T) {
	f, err := os.Open("testdata/select_protocol.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewSource(1))
	sc := bufio.NewScanner(f)
	cases, ties := 0, 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		groupText, want, ok := strings.Cut(text, " -> ")
		if !ok {
			t.Fatalf("select_protocol.txt:%d: no \" -> \" in %q", line, text)
		}
		var lists [][]string
		for _, l := range strings.Fields(groupText) {
			lists = append(lists, strings.Split(l, ","))
		}
		for round := 0; round < 3; round++ {
			got, ok := SelectProtocol(lists)
			if !ok {
				got = "none"
			}
			if got != want {
				t.Errorf("select_protocol.txt:%d: %v selects %s, Kafka %s", line, lists, got, want)
			}
			r.Shuffle(len(lists), func(i, j int) { lists[i], lists[j] = lists[j], lists[i] })
		}
		if want != "none" && isTie(lists) {
			ties++
		}
		cases++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cases < 600 || ties < 20 {
		t.Fatalf("the fixture held %d groups, %d of them ties; want the whole file (at least 600, 20 ties)", cases, ties)
	}
}

// isTie: two candidates got the most votes.
func isTie(lists [][]string) bool {
	cands := Candidates(lists)
	votes := map[string]int{}
	for _, l := range lists {
		for _, n := range l {
			if slices.Contains(cands, n) {
				votes[n]++
				break
			}
		}
	}
	best, at := 0, 0
	for _, v := range votes {
		switch {
		case v > best:
			best, at = v, 1
		case v == best:
			at++
		}
	}
	return at > 1
}

// The vote, rule by rule (ClassicGroup.selectProtocol): only assignors
// every member lists count; each member votes for the first of its own
// list among them; most votes win; a tie goes to Java's HashMap order
// (sticky, range, roundrobin, cooperative-sticky), not to the order of
// the lists or of the members.
func TestSelectProtocolRules(t *testing.T) {
	for _, c := range []struct {
		lists []string
		want  string
	}{
		// KIP-429's first bounce: while one member lists range alone,
		// range is the only candidate.
		{[]string{"cooperative-sticky,range", "cooperative-sticky,range", "range"}, "range"},
		// Every member bounced once: both are candidates, and every
		// member's first is cooperative-sticky.
		{[]string{"cooperative-sticky,range", "cooperative-sticky,range", "cooperative-sticky,range"}, "cooperative-sticky"},
		// Second bounce under way: cooperative-sticky is the only candidate.
		{[]string{"cooperative-sticky", "cooperative-sticky,range"}, "cooperative-sticky"},
		// Kafka's default list (range,cooperative-sticky) votes range.
		{[]string{"range,cooperative-sticky", "range,cooperative-sticky"}, "range"},
		// Most votes win: two for cooperative-sticky, one for range.
		{[]string{"cooperative-sticky,range", "cooperative-sticky,range", "range,cooperative-sticky"}, "cooperative-sticky"},
		// A tie, one vote each: range comes before cooperative-sticky in
		// Java's HashMap, whichever member lists it first.
		{[]string{"cooperative-sticky,range", "range,cooperative-sticky"}, "range"},
		{[]string{"range,cooperative-sticky", "cooperative-sticky,range"}, "range"},
		// sticky before range, range before roundrobin.
		{[]string{"range,sticky", "sticky,range"}, "sticky"},
		{[]string{"roundrobin,range", "range,roundrobin"}, "range"},
		// A name one member does not list gets no vote, even as a first choice.
		{[]string{"sticky,range", "sticky,range", "range"}, "range"},
	} {
		var lists [][]string
		for _, l := range c.lists {
			lists = append(lists, strings.Split(l, ","))
		}
		if got, ok := SelectProtocol(lists); !ok || got != c.want {
			t.Errorf("%v: selected %q (%v), want %s", c.lists, got, ok, c.want)
		}
	}
	if got, ok := SelectProtocol([][]string{{"range"}, {"cooperative-sticky"}}); ok {
		t.Errorf("range against cooperative-sticky selected %s; want none (no assignor every member lists)", got)
	}
}

// ConsumerCoordinator's constructor: the protocols every assignor of the
// list supports, the highest; cooperative-sticky alone supports
// COOPERATIVE.
func TestListProtocol(t *testing.T) {
	for list, want := range map[string]Protocol{
		"cooperative-sticky":                  Cooperative,
		"cooperative-sticky,range":            Eager,
		"range,cooperative-sticky":            Eager,
		"range":                               Eager,
		"sticky":                              Eager,
		"roundrobin,sticky":                   Eager,
		"cooperative-sticky,sticky":           Eager,
		"cooperative-sticky,roundrobin,range": Eager,
	} {
		if got := ListProtocol(strings.Split(list, ",")); got != want {
			t.Errorf("%s: %s, want %s", list, got, want)
		}
	}
}

// Supports is supportsProtocols outside Empty: some assignor of the
// joiner's list is listed by every member.
func TestSupports(t *testing.T) {
	group := [][]string{{"range"}, {"cooperative-sticky", "range"}}
	for list, want := range map[string]bool{
		"cooperative-sticky":       false, // the one-bounce shortcut
		"cooperative-sticky,range": true,  // KIP-429's first bounce
		"range":                    true,
		"roundrobin,range":         true,
		"roundrobin,sticky":        false,
	} {
		if got := Supports(group, strings.Split(list, ",")); got != want {
			t.Errorf("%s joining %v: %v, want %v", list, group, got, want)
		}
	}
}

// ParseList takes what Kafka's client takes and refuses, naming the value
// and what is allowed, what it refuses: an empty list or element, an
// unknown name, a name twice.
func TestParseList(t *testing.T) {
	for v, want := range map[string][]string{
		"range":                    {"range"},
		"cooperative-sticky,range": {"cooperative-sticky", "range"},
		"roundrobin,sticky,cooperative-sticky,range": {"roundrobin", "sticky", "cooperative-sticky", "range"},
	} {
		got, err := ParseList(v)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for v, want := range map[string]string{
		"":                         "an empty list",
		"fifo":                     `"fifo" is not one of range, roundrobin, sticky, cooperative-sticky`,
		"cooperative-sticky,fifo":  `"fifo" in "cooperative-sticky,fifo" is not one of range, roundrobin, sticky, cooperative-sticky`,
		"cooperative-sticky,":      `"cooperative-sticky," has an empty name at position 2`,
		",range":                   `",range" has an empty name at position 1`,
		"range,,sticky":            `"range,,sticky" has an empty name at position 2`,
		"range,sticky,range":       `"range,sticky,range" names range twice`,
		"Range":                    `"Range" is not one of`,
		"cooperative-sticky range": `is not one of`,
	} {
		_, err := ParseList(v)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "partition.assignment.strategy: ") {
			t.Errorf("%q: error %v, want one naming the setting and saying %q", v, err, want)
		}
	}
}
