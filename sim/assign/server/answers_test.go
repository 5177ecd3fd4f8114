package server

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim/assign"
)

// TestKafkaAnswers checks the assignors against answers Kafka's own
// UniformAssignor and RangeAssignor gave for the same inputs with the same
// (name-derived) topic ids; testdata/kafka_answers.txt says how they were made.
func TestKafkaAnswers(t *testing.T) {
	f, err := os.Open("testdata/kafka_answers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type answerCase struct {
		line     int
		title    string
		assignor string
		in       Input
		want     strings.Builder
	}
	var cases []*answerCase
	var c *answerCase
	inAnswer := false
	title := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fail := func(msg string) { t.Fatalf("kafka_answers.txt:%d: %s: %q", n, msg, line) }
		switch {
		case line == "":
			c, inAnswer = nil, false
		case strings.HasPrefix(line, "#"):
			title = strings.TrimPrefix(line, "# ")
		case strings.HasPrefix(line, "assignor ") && c == nil:
			c = &answerCase{line: n, title: title, assignor: strings.TrimPrefix(line, "assignor ")}
			cases = append(cases, c)
		case c == nil:
			fail("input outside a case")
		case line == "----":
			inAnswer = true
		case inAnswer:
			c.want.WriteString(line + "\n")
		default:
			fs := strings.Fields(line)
			switch {
			case fs[0] == "topic" && len(fs) == 3:
				p, err := strconv.Atoi(fs[2])
				if err != nil {
					fail("bad partition count")
				}
				c.in.Topics = append(c.in.Topics, Topic{Name: fs[1], Partitions: p})
			case fs[0] == "member" && len(fs) == 5:
				m := Member{MemberID: fs[1]}
				if fs[2] != "-" {
					m.InstanceID = fs[2]
				}
				if fs[3] != "-" {
					m.Topics = strings.Split(fs[3], ",")
				}
				if fs[4] != "-" {
					for _, x := range strings.Split(fs[4], ",") {
						name, p, _ := strings.Cut(x, ":")
						pn, err := strconv.Atoi(p)
						if err != nil {
							fail("bad partition")
						}
						m.Assigned = append(m.Assigned, assign.TopicPartition{Topic: name, Partition: pn})
					}
				}
				c.in.Members = append(c.in.Members, m)
			default:
				fail("unknown line")
			}
		}
	}
	if len(cases) < 50 {
		t.Fatalf("only %d cases read", len(cases))
	}
	for _, c := range cases {
		as, err := New(c.assignor)
		if err != nil {
			t.Fatalf("kafka_answers.txt:%d: %v", c.line, err)
		}
		out, err := as.Assign(c.in)
		if err != nil {
			t.Errorf("kafka_answers.txt:%d (%s): %v", c.line, c.title, err)
			continue
		}
		var got strings.Builder
		for _, m := range c.in.Members {
			got.WriteString(m.MemberID + ":")
			for _, p := range out[m.MemberID] {
				fmt.Fprintf(&got, " %s", p)
			}
			got.WriteString("\n")
		}
		if got.String() != c.want.String() {
			t.Errorf("kafka_answers.txt:%d (%s): got\n%sKafka answered\n%s", c.line, c.title, got.String(), c.want.String())
		}
		checkValid(t, c.in, out)
	}
}
