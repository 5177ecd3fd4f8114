package kernel

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 28: under auto-commit the consumer protocol loses nothing the
// classic one does not. Kafka 4.0.0's client reconciles only from the
// application's poll(), after the batch (KAFKA-18641), so a crash in the
// middle of a batch while C2 joins duplicates records but loses none;
// kgrepl's client before it committed the batch's positions at once from
// the background and lost the rest of the batch.

// The explorer's at-least-once sweep on the default world with C2
// joining: every crash point of C1, under both protocols, with
// auto-commit (the default): no violation.
func TestExploreAtLeastOnceUnderAutoCommit(t *testing.T) {
	for _, proto := range []string{"classic", "consumer"} {
		t.Run(proto, func(t *testing.T) {
			s := checkedSession(t)
			for _, c := range []string{"set group.protocol " + proto, "new --keep-settings", "join C2"} {
				if _, err := s.Exec(c); err != nil {
					t.Fatalf("%s: %v", c, err)
				}
			}
			got, err := s.Exec("explore --faults crash-now --members C1 --json")
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Guarantee  string         `json:"guarantee"`
				Branches   int            `json:"branches"`
				Violations int            `json:"violations"`
				Counts     map[string]int `json:"counts"`
			}
			if err := json.Unmarshal([]byte(got), &r); err != nil {
				t.Fatalf("%v: %s", err, got)
			}
			if r.Guarantee != "at-least-once" || r.Branches < 20 {
				t.Fatalf("want an at-least-once sweep of every tick: %s", got)
			}
			if r.Violations != 0 {
				t.Errorf("%s: %d of %d branches violate at-least-once: %v", proto, r.Violations, r.Branches, r.Counts)
			}
			if r.Counts["duplicate"] == 0 {
				t.Errorf("%s: no crash point duplicated a record; the sweep did not reach a batch in hand: %v", proto, r.Counts)
			}
		})
	}
}

// compare group.protocol classic,consumer on new; join C2 with C1
// crashing two records into its batch: the consumer protocol loses
// nothing classic does not (nothing, here).
func TestCompareCrashMidBatchLosesNothing(t *testing.T) {
	s := checkedSession(t)
	for _, c := range []string{"new", "join C2", "crash C1 after 2", "run until stable", "run until stable"} {
		if _, err := s.Exec(c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	got, err := s.Exec("compare group.protocol classic,consumer --json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Rows []struct {
			Settings  string `json:"settings"`
			Processed int    `json:"processed"`
			Lost      int    `json:"lost"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(got), &r); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	lost := map[string]int{}
	for _, row := range r.Rows {
		if row.Processed < 2 {
			t.Errorf("%s: processed %d, want the two records before the crash at least", row.Settings, row.Processed)
		}
		lost[strings.TrimPrefix(row.Settings, "group.protocol=")] = row.Lost
	}
	if len(lost) != 2 {
		t.Fatalf("want a classic and a consumer row: %s", got)
	}
	if lost["consumer"] > lost["classic"] || lost["consumer"] != 0 {
		t.Errorf("lost: classic %d, consumer %d; want none under either", lost["classic"], lost["consumer"])
	}
}
