package assign

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Answers of Kafka's own Java assignors (StickyAssignor and
// CooperativeStickyAssignor of the 4.x line, compiled from Kafka's source and
// run by a small driver outside this repository) on random multi-round cases:
// each record is one assign call, its input (topics with partition counts;
// members in JoinGroup order with their subscriptions, claimed partitions and
// generations) and Kafka's answer. Between rounds each member claims what it
// was given, with the round's generation; members join, leave, change
// subscription, rejoin under a new id, or miss a round (then they claim a
// stale assignment). For "sticky" the claims are the user data of Kafka's
// StickyAssignor (the eager member has revoked everything); for
// "cooperative-sticky" the owned partitions and generation of the
// subscription. The driver makes a new assignor object per call, so Kafka's
// maxGeneration, which the Java object keeps across calls, is that of the call.
//
// The committed fixture testdata/kafka_java_cases.txt holds a sample; a larger
// file from the same driver can be checked with
//
//	go test ./sim/assign -run TestKafkaJavaCases -javacases=/path/to/file
//
// which prints the share of exact answers instead of failing on the first.
var javaCases = flag.String("javacases", "", "file of Kafka Java assignor answers to compare with (prints the exact-match figure)")

type javaCase struct {
	name     string // "case 12 sticky round 3"
	assignor string
	in       Input
	want     Assignment
	err      string // Kafka threw
}

func readJavaCases(t testing.TB, path string) []javaCase {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []javaCase
	var c *javaCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	line := 0
	parseTPs := func(s string) []TopicPartition {
		if s == "-" {
			return nil
		}
		var ps []TopicPartition
		for _, x := range strings.Split(s, ",") {
			i := strings.LastIndexByte(x, '-')
			n, err := strconv.Atoi(x[i+1:])
			if i <= 0 || err != nil {
				t.Fatalf("%s:%d: bad partition %q (want topic-N)", path, line, x)
			}
			ps = append(ps, TopicPartition{Topic: x[:i], Partition: n})
		}
		return ps
	}
	for sc.Scan() {
		line++
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		bad := func() { t.Fatalf("%s:%d: cannot read %q", path, line, sc.Text()) }
		switch fs[0] {
		case "case":
			if len(fs) != 5 {
				bad()
			}
			out = append(out, javaCase{name: sc.Text(), assignor: fs[2], in: Input{Partitions: map[string]int{}}, want: Assignment{}})
			c = &out[len(out)-1]
		case "topics":
			for _, x := range fs[1:] {
				i := strings.LastIndexByte(x, ':')
				n, err := strconv.Atoi(x[i+1:])
				if i <= 0 || err != nil {
					bad()
				}
				c.in.Partitions[x[:i]] = n
			}
		case "member":
			if len(fs) != 8 || fs[2] != "gen" || fs[4] != "topics" || fs[6] != "owned" {
				bad()
			}
			g, err := strconv.Atoi(fs[3])
			if err != nil {
				bad()
			}
			c.in.Members = append(c.in.Members, Member{MemberID: fs[1], Generation: g,
				Topics: strings.Split(fs[5], ","), Owned: parseTPs(fs[7])})
		case "expect":
			if len(fs) != 3 {
				bad()
			}
			c.want[fs[1]] = parseTPs(fs[2])
		case "error":
			c.err = strings.Join(fs[1:], " ")
		case "end":
			c = nil
		default:
			bad()
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// kafkaInvalid reports whether Kafka's answer gives a partition to a member
// not subscribed to its topic (we stay valid there, so cannot match).
func kafkaInvalid(c javaCase) bool {
	for _, m := range c.in.Members {
		for _, p := range c.want[m.MemberID] {
			if !slices.Contains(m.Topics, p.Topic) {
				return true
			}
		}
	}
	return false
}

func sameAssignment(in Input, got, want Assignment) (bool, string) {
	for _, m := range in.Members {
		g := slices.Clone(got[m.MemberID])
		w := slices.Clone(want[m.MemberID])
		SortPartitions(g)
		SortPartitions(w)
		if !slices.Equal(g, w) {
			return false, fmt.Sprintf("%s: got %s, Kafka %s", m.MemberID, spell(g), spell(w))
		}
	}
	return true, ""
}

func compareJavaCases(t *testing.T, cases []javaCase, strict bool) {
	type tally struct{ n, exact, invalid, errs int }
	tallies := map[string]*tally{}
	for _, c := range cases {
		tl := tallies[c.assignor]
		if tl == nil {
			tl = &tally{}
			tallies[c.assignor] = tl
		}
		if c.err != "" {
			tl.errs++
			continue
		}
		var a Assignor
		switch c.assignor {
		case "sticky":
			a = kafkaEager
		case "cooperative-sticky":
			a = kafkaCoop
		default:
			t.Fatalf("%s: unknown assignor %q", c.name, c.assignor)
		}
		tl.n++
		got := a.Assign(c.in)
		checkValid(t, c.in, got)
		if ok, why := sameAssignment(c.in, got, c.want); ok {
			tl.exact++
		} else if kafkaInvalid(c) {
			tl.invalid++
			if testing.Verbose() {
				t.Logf("%s: Kafka's answer is invalid; %s", c.name, why)
			}
		} else if strict {
			t.Errorf("%s: %s", c.name, why)
		} else if testing.Verbose() {
			t.Logf("%s: %s", c.name, why)
		}
	}
	for _, name := range []string{"sticky", "cooperative-sticky"} {
		if tl := tallies[name]; tl != nil {
			t.Logf("%s: %d of %d calls exact (%.2f%%); %d more where Kafka's answer is invalid; %d where Kafka threw",
				name, tl.exact, tl.n, 100*float64(tl.exact)/float64(max(tl.n, 1)), tl.invalid, tl.errs)
		}
	}
}

func TestKafkaJavaCases(t *testing.T) {
	if *javaCases != "" {
		compareJavaCases(t, readJavaCases(t, *javaCases), false)
		return
	}
	cases := readJavaCases(t, "testdata/kafka_java_cases.txt")
	if len(cases) < 200 {
		t.Fatalf("only %d cases in the fixture", len(cases))
	}
	compareJavaCases(t, cases, true)
}
