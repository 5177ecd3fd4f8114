package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 26's own group, through the binary: a script imports a group as
// kafka-consumer-groups.sh described it and a client's .properties, runs
// and saves; with both files gone, another run loads the session and
// prints the same views; a bad file fails the script at its line.
func TestOwnGroupThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "../../kernel/kafkafmt/testdata/describe/kafka37-static-pods.txt", filepath.Join(dir, "pods.txt"))
	copyFile(t, "../../kernel/testdata/import/orders-app.properties", filepath.Join(dir, "app.properties"))
	views := "describe group --members --verbose --real-names\ndescribe group --json\nmetrics --json\nshow names\n"
	first := script(t, dir, "new --from-describe "+filepath.Join(dir, "pods.txt")+"\n"+
		"set --from "+filepath.Join(dir, "app.properties")+"\n"+
		"restart C2\nrun until tick 20\njoin C5\nrun until stable\n"+views+
		"save "+filepath.Join(dir, "s.kg")+"\n")
	out, errs, code := kgrepl(t, "", first)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	for _, want := range []string{
		"KGREPL CLIENT-ID  HOST        GROUP-INSTANCE-ID #PARTITIONS CONSUMER-ID\nC1     orders-app /10.42.0.17 orders-app-0      3",
		"line 7: session.timeout.ms=45000: not applied: this world counts every .ms setting in ticks",
		"static member orders-app-1 returns as C2-2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	i := strings.Index(out, "GROUP      CONSUMER-ID GROUP-INSTANCE-ID HOST")
	j := strings.LastIndex(out, "saved branch main")
	if i < 0 || j < i {
		t.Fatalf("no views in:\n%s", out)
	}
	want := out[i:j]
	for _, f := range []string{"pods.txt", "app.properties"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	out2, errs2, code2 := kgrepl(t, "load "+filepath.Join(dir, "s.kg")+"\n"+views)
	if code2 != 0 {
		t.Fatalf("load without the files: exit %d: %s", code2, errs2)
	}
	if got := out2[strings.Index(out2, "\n")+1:]; got != want {
		t.Errorf("after load, without the files:\n%s\nwant:\n%s", got, want)
	}
	// A bad file stops the script at its line, naming the file's line.
	bad := filepath.Join(dir, "bad.properties")
	if err := os.WriteFile(bad, []byte("group.id=g\nmax.poll.records=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs3, code3 := kgrepl(t, "join C2\nset --from "+bad+"\ndescribe group\n")
	if code3 != 1 || !strings.Contains(errs3, "line 2: set --from "+bad+": Kafka's client would refuse this configuration, so nothing is applied:\n  line 2: max.poll.records=0: must be at least 1 (Kafka: atLeast(1))") {
		t.Errorf("exit %d, stderr %q", code3, errs3)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
