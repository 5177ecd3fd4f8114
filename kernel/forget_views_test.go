package kernel

import (
	"strings"
	"testing"
)

// TestViewsOfALogThatLetGoOfItsPast: in a world whose output log let go
// of its past (history.ms), `consume` lists the records it keeps with the
// same invoice numbers ("invoice 2 of" a record written again, its first invoice,
// aborted, let go of) and the same
// delivery counts as the world keeping every cell, at both isolation
// levels; `log` shows the cells from the log's start, as the other world
// shows them, says where the log starts, and refuses an offset below it
// with the reason.
func TestViewsOfALogThatLetGoOfItsPast(t *testing.T) {
	script := strings.Join([]string{
		"set producer transactional; set isolation.level read_committed",
		"join C2; run until stable",
		"run until polled o2.3",
		"crash C2 after 3; run until processed o2.5",
		"run until tick 62",
		"run until processed o2.5 by C1",
		"step 8",
	}, "\n")
	full, cut := NewSession(), NewSession()
	runLines(t, full, script)
	runLines(t, cut, script)
	w := cut.World()
	w.ForgetOutputBeforeForTest(w.Tick - 20)
	tp := w.Layout().Outputs()[0]
	start := w.Log(tp).Start()
	if start == 0 {
		t.Fatalf("%s did not let go of any cell at tick %d", tp, w.Tick)
	}
	for _, iso := range []string{"read_committed", "read_uncommitted"} {
		got, err := cut.Exec("consume invoices --isolation " + iso)
		if err != nil {
			t.Fatal(err)
		}
		head := strings.SplitN(got, "\n", 2)[0] // "invoices at ISO: N record(s); duplicates ..."
		n := strings.Fields(strings.SplitN(head, ": ", 2)[1])[0]
		want, err := full.Exec("consume invoices --isolation " + iso + " --last " + n)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("consume invoices --isolation %s after letting go of the cells below %d:\n%s\nthe last %s records keeping every cell:\n%s", iso, start, got, n, want)
		}
		if iso == "read_uncommitted" && (!strings.Contains(got, "duplicates 3") || !strings.Contains(got, "(invoice 2 of o2.3)")) {
			t.Fatalf("consume invoices --isolation %s shows no record written again: the test proves less than it says\n%s", iso, got)
		}
	}
	got, err := cut.Exec("log " + tp.String())
	if err != nil {
		t.Fatal(err)
	}
	want, err := full.Exec("log " + tp.String() + " --from " + itoa(start))
	if err != nil {
		t.Fatal(err)
	}
	gotHead, gotRows, _ := strings.Cut(got, "\n")
	wantHead, wantRows, _ := strings.Cut(want, "\n")
	if gotRows != wantRows {
		t.Fatalf("log %s after letting go of the cells below %d:\n%s\nkeeping every cell, from %d:\n%s", tp, start, got, start, want)
	}
	if !strings.Contains(gotHead, "log start "+itoa(start)+" (the cells before it let go of: history.ms)") || strings.Contains(wantHead, "log start") {
		t.Fatalf("log %s heads: %q after letting go of the cells below %d, %q keeping every one", tp, gotHead, start, wantHead)
	}
	for _, line := range []string{"log " + tp.String() + " --from 0", "log " + tp.String() + " --around " + itoa(start-1)} {
		_, err := cut.Exec(line)
		if err == nil || !strings.Contains(err.Error(), "the cells before offset "+itoa(start)+" were let go of (history.ms") {
			t.Fatalf("%s below the log's start %d: %v", line, start, err)
		}
	}
}
