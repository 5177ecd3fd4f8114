package kernel

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/kernel/kafkafmt"
)

// importSession is a session in a folder holding the import fixtures.
func importSession(t *testing.T) *Session {
	t.Helper()
	s := checkedSession(t)
	s.Dir = t.TempDir()
	copyImportFixtures(t, s.Dir)
	return s
}

func mustExec(t *testing.T, s *Session, line string) string {
	t.Helper()
	out, err := s.Exec(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return out
}

// ownViews are what a user reads of an imported world: the three views
// SPEC §9 promises byte for byte, the file's names, the settings.
func ownViews(t *testing.T, s *Session) string {
	t.Helper()
	return threeViews(t, s) + "\n" + mustExec(t, s, "describe group --members --verbose --real-names; describe group --real-names --json; show names; show config")
}

// A session that read files (new --from-describe, set --from) saves what
// they read: load replays it with the files gone, to the same views byte
// for byte, and saves the same file again; back, fork and compare replay
// it without the files too.
func TestImportedSessionSavesWhatItRead(t *testing.T) {
	s := importSession(t)
	for _, line := range []string{
		"new --from-describe kafka37-static-pods.txt",
		"run until tick 5",
		"set --from orders-app.properties",
		"restart C2",
		"run until tick 20",
		"set --from orders-app.properties --client C3",
		"join C5",
		"run until stable",
	} {
		mustExec(t, s, line)
	}
	want := ownViews(t, s)
	wantBack := mustExec(t, s, "fork probe; back 7; describe group --json; metrics --json; switch main")
	mustExec(t, s, "save one.kg")
	saved, err := os.ReadFile(filepath.Join(s.Dir, "one.kg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nnew --from-describe kafka37-static-pods.txt --keep-settings\n#< 11 lines read from kafka37-static-pods.txt",
		"\n#| orders-app      orders-app-7b2d9e4f-1a3c-4e5b-8d6f-0a1b2c3d4e5f orders-app-2      /10.42.1.23     orders-app      2               orders(4,5)\n",
		"\nset --from orders-app.properties\n#< 20 lines read from orders-app.properties",
		"\nset --from orders-app.properties --client C3\n#< 20 lines read from orders-app.properties",
		"\n#|\n#| # the producer half (consume-process-produce)\n",
	} {
		if !strings.Contains(string(saved), want) {
			t.Errorf("the session file lacks %q:\n%s", want, saved)
		}
	}
	// The files are gone: only the session file says what they held.
	for _, f := range []string{"kafka37-static-pods.txt", "orders-app.properties"} {
		if err := os.Remove(filepath.Join(s.Dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	d := checkedSession(t)
	d.Dir = s.Dir
	mustExec(t, d, "load one.kg")
	if got := ownViews(t, d); got != want {
		t.Errorf("after load:\n%s\nwant:\n%s", got, want)
	}
	mustExec(t, d, "save two.kg")
	again, _ := os.ReadFile(filepath.Join(s.Dir, "two.kg"))
	if !bytes.Equal(again, saved) {
		t.Errorf("saved again after load, the file differs:\n%s\nwas:\n%s", again, saved)
	}
	for _, sess := range []*Session{s, d} {
		if got := mustExec(t, sess, "fork probe2; back 7; describe group --json; metrics --json; switch main"); got != strings.ReplaceAll(wantBack, "probe", "probe2") {
			t.Errorf("back 7 without the files:\n%s\nwant:\n%s", got, wantBack)
		}
		if _, err := sess.Exec("compare group.instance.id none,per-member max.poll.records 1,3"); err != nil {
			t.Errorf("compare without the files: %v", err)
		}
	}
	// compare reran the import and both set --from from what they read.
	rows, err := d.Compare([]string{"max.poll.records"}, [][]string{{"100"}})
	if err != nil || len(rows) != 1 || rows[0].Error != "" {
		t.Fatalf("compare: %v %+v", err, rows)
	}
	if got := ownViews(t, d); got != want {
		t.Errorf("compare changed the branch")
	}
}

// load refuses a session file whose record of what a command read is
// missing, short or altered, naming the line; the session stays as it was.
func TestLoadRefusesAMissingOrDamagedFileBlock(t *testing.T) {
	s := importSession(t)
	mustExec(t, s, "new --from-describe kafka40-consumer-stable.txt --output settled:1; step 3; set --from orders-app.properties; save good.kg")
	good, _ := os.ReadFile(filepath.Join(s.Dir, "good.kg"))
	resum := func(body string) string {
		// A file edited by hand and given a new checksum: load checks what
		// it holds, not only that it is unchanged.
		body = body[:strings.LastIndex(strings.TrimSuffix(body, "\n"), "\n")+1]
		lines := 0
		for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n")[2:] {
			if w, _, err := inputLine(l, "x"); err == nil && len(w) > 0 {
				lines++
			}
		}
		return body + endLine(body, lines, 3)
	}
	cases := []struct {
		name, body, want string
	}{
		{"block dropped", resum(dropLines(string(good), "#")), "line 5: the command reads kafka40-consumer-stable.txt, and the file does not hold what it read"},
		{"short block", resum(strings.Replace(string(good), "#< 10 lines", "#< 13 lines", 1)), "line 5: what it read (line 6) is 13 lines, and line 17 is not one of them"},
		{"edited", strings.Replace(string(good), "payments:0,3", "payments:0,4", 1), "the checksum in the end line"},
		{"stray block", resum(strings.Replace(string(good), "step 3\n", "step 3\n#| x\n", 1)), "what a command read, with no command that reads a file before it"},
		{"bad head", resum(strings.Replace(string(good), "#< 10 lines", "#< ten lines", 1)), "line 5: \"#< ten lines read from kafka40-consumer-stable.txt (load replays the command with these, not the file)\" does not say how many lines follow"},
		{"block at the end", resum(strings.Replace(string(good), "#< 20 lines", "#< 40 lines", 1)), "line 18: what it read (line 19) is 40 lines, and the file ends before them"},
	}
	before := sessionSnapshot(t, s)
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(s.Dir, "bad.kg"), []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := s.Exec("load bad.kg")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: load: %v, want an error saying %q", c.name, err, c.want)
		}
		if after := sessionSnapshot(t, s); after != before {
			t.Errorf("%s: the refused load changed the session", c.name)
		}
	}
}

// dropLines drops the lines starting with prefix after the header lines.
func dropLines(body, prefix string) string {
	lines := strings.Split(body, "\n")
	out := lines[:2]
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, prefix+"<") && !strings.HasPrefix(l, prefix+"|") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Every refused import or configuration leaves the session exactly as it
// was, and names the file, the line where there is one, and the rule.
func TestRefusedImportsLeaveTheSession(t *testing.T) {
	s := importSession(t)
	mustExec(t, s, "new --from-describe kafka37-static-pods.txt; join C5; step 4; set --from orders-app.properties")
	if err := os.WriteFile(filepath.Join(s.Dir, "crlf-bom.txt"), []byte("\ufeff"+strings.ReplaceAll(readFixture(t, "kafkafmt/testdata/describe/kafka40-consumer-stable.txt"), "\n", "\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("empty.txt", "")
	write("rebalancing.txt", "\nWarning: Consumer group 'g' is rebalancing.\n")
	write("dead.txt", "\nError: Consumer group 'g' does not exist.\n")
	write("utf8.properties", "client.id=caf\xc3\xa9\n")
	write("state-only.txt", readFixture(t, "kafkafmt/testdata/describe/kafka37-state.txt"))
	write("comments.properties", "# the keys are in the Helm chart\n\n")
	write("typo.properties", "sesion.timeout.ms=10\n")
	write("streams.properties", "consumer.group.protocol=consumer\napplication.id=a\nb1=1\nb2=2\nb3=3\nb4=4\nb5=5\n")
	if err := os.Mkdir(filepath.Join(s.Dir, "folder.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, want string }{
		{"new --from-describe empty.txt", "new --from-describe empty.txt: no group found"},
		{"new --from-describe dead.txt", `the file says group "g" does not exist`},
		{"new --from-describe rebalancing.txt", `the file names no partition of group "g"`},
		{"new --from-describe state-only.txt", `the file says group "orders-processing" has 3 member(s) (#MEMBERS of --state) but lists none`},
		{"new --from-describe folder.txt", "new --from-describe folder.txt: it is a folder"},
		{"new --from-describe crlf-bom.txt --topics payments:2", "--topics payments:2: the file shows payments-5"},
		{"new --from-describe kafka40-consumer-stable.txt --output payments:1", "topic payments: the group reads it, and it is the output topic --output names"},
		{"new --from-describe kafka37-static-pods.txt --topics __consumer_offsets:50", `topic "__consumer_offsets"`},
		{"new --from-describe kafka37-static-pods.txt --topics big:200000000", "over the limit"},
		{"new --from-describe kafka37-static-pods.txt --topics extra:2,extra:3", "--topics names extra twice"},
		{"new --from-describe kafka37-static-pods.txt --group", "--group needs a value"},
		{"new --from-describe kafka37-static-pods.txt --group orders-app --members 2", "--members and --from-describe contradict each other"},
		{"set --from utf8.properties", "set --from utf8.properties: line 1: byte 0xC3 is not ASCII"},
		{"set --from java-producer-transactional.properties", "line 9: delivery.timeout.ms=30000: delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms = 30020"},
		{"set --from folder.txt", "it is a folder"},
		{"set --from comments.properties", "set --from comments.properties: the file sets no key"},
		{"set --from typo.properties", "no key of the file is a config of Kafka 4.0's consumer or producer, so it is not a client's .properties and nothing is applied" +
			" (a client's file sets keys such as group.id, group.protocol, session.timeout.ms; kafka-consumer-groups.sh --describe output is read by new --from-describe FILE):\n" +
			`  line 1: "sesion.timeout.ms": not a config of Kafka 4.0's consumer or producer; did you mean session.timeout.ms?`},
		{"set --from streams.properties", "a client's own file says group.protocol\n  line 2: \"application.id\""},
		{"set --from streams.properties", "\n  and 2 more key(s) of the same kind"},
		{"set --from kafka37-static-pods.txt", "kafka-consumer-groups.sh --describe output is read by new --from-describe FILE"},
		{"set --from orders-app.properties C2", `unexpected "C2" after --from FILE`},
		{"set --from orders-app.properties --client C0", `--client "C0" is not a client id`},
	} {
		before := sessionSnapshot(t, s)
		_, err := s.Exec(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.line, err, c.want)
		}
		if strings.Contains(errString(err), "internal error") {
			t.Errorf("%s: %v", c.line, err)
		}
		if after := sessionSnapshot(t, s); after != before {
			t.Errorf("%s: the refused command changed the session", c.line)
		}
	}
	// What a transport adds to a describe file (a byte-order mark, CRLF)
	// changes nothing, and is not what the session keeps.
	mustExec(t, s, "new --from-describe crlf-bom.txt --output settled:1")
	if f := s.cur.hist.origin.file; strings.ContainsAny(f.text, "\r\ufeff") || f.text != readFixture(t, "kafkafmt/testdata/describe/kafka40-consumer-stable.txt") {
		t.Errorf("the session keeps %q", f.text)
	}
}

func readFixture(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The text a session keeps of a file parses as the file did: what
// propertiesText and describeText undo (line ends Java and the tool's
// parser take alike, a byte-order mark, comments' ISO-8859-1 bytes) never
// changes an entry or a group. Checked on every fixture and on variants
// with each kind of line end and Latin-1 comments.
func TestKeptTextParsesAsTheFile(t *testing.T) {
	props, _ := filepath.Glob("kafkafmt/testdata/properties/*.properties")
	more, _ := filepath.Glob("testdata/import/*.properties")
	for _, f := range append(props, more...) {
		text := readFixture(t, f)
		for _, v := range []string{text, strings.ReplaceAll(text, "\n", "\r\n"), strings.ReplaceAll(text, "\n", "\r"),
			"# caf\xe9 \xff\n" + text + "\\\r\n  continued=\\\r\nx\n! \xa0\r"} {
			a, errA := kafkafmt.ParseProperties(strings.NewReader(v))
			b, errB := kafkafmt.ParseProperties(strings.NewReader(propertiesText([]byte(v))))
			if (errA == nil) != (errB == nil) || errA == nil && !reflect.DeepEqual(a, b) {
				t.Errorf("%s (%q...): the file reads %v %v, the kept text %v %v", f, v[:min(len(v), 30)], a, errA, b, errB)
			}
			if !isASCII(propertiesText([]byte(v))) && !strings.Contains(propertiesText([]byte(v)), "é") {
				t.Errorf("%s: Latin-1 bytes not kept as their characters", f)
			}
		}
	}
	descs, _ := filepath.Glob("kafkafmt/testdata/describe/*.txt")
	for _, f := range descs {
		text := readFixture(t, f)
		for _, v := range []string{text, "\ufeff" + strings.ReplaceAll(text, "\n", "\r\n")} {
			a, errA := kafkafmt.ParseDescribe(strings.NewReader(v))
			b, errB := kafkafmt.ParseDescribe(strings.NewReader(describeText([]byte(v))))
			if (errA == nil) != (errB == nil) || errA == nil && !reflect.DeepEqual(a, b) {
				t.Errorf("%s: the file reads %v, the kept text %v", f, errA, errB)
			}
		}
	}
}

// FuzzNewFromDescribe feeds new --from-describe any text, as a session
// file's block would give it: no input panics; a refused one leaves the
// session as it was; an accepted one starts a Stable (or empty) group that
// keeps the engine's invariants, saves and loads to the same views, and
// each member owns what the file says.
func FuzzNewFromDescribe(f *testing.F) {
	files, _ := filepath.Glob("kafkafmt/testdata/describe/*.txt")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(string(b), "")
	}
	f.Add("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\ng t 3 1 2 1 c-1 /h c\n", "")
	f.Add("", "billing")
	f.Fuzz(func(t *testing.T, text, group string) {
		if len(text) > 20000 || strings.ContainsAny(group, " ;#\t\n\r") {
			return
		}
		s := checkedSession(t)
		s.Dir = t.TempDir()
		line := "new --from-describe f.txt --output out-topic:1"
		if group != "" {
			line += " --group " + group
		}
		if _, ok := execSupplied(t, s, "f.txt", text, line); !ok {
			return
		}
		w := s.World()
		for _, m := range s.importedNames().members {
			got := 0
			d := w.Group.Describe()
			if gm := d.Member(w.Member(m.client).MemberID); gm != nil {
				got = len(gm.Assignment)
			}
			if got != m.partitions {
				t.Fatalf("%s owns %d partitions, the file gives it %d", m.client, got, m.partitions)
			}
		}
		mustExec(t, s, "step 3")
		reloaded(t, s, "f.kg")
	})
}

// FuzzSetFrom feeds set --from any .properties text: no input panics; a
// refused file leaves the session as it was; an accepted one lists every
// key of the file, and replays (back, then forward) to the same world.
func FuzzSetFrom(f *testing.F) {
	files, _ := filepath.Glob("kafkafmt/testdata/properties/*.properties")
	more, _ := filepath.Glob("testdata/import/*.properties")
	for _, p := range append(files, more...) {
		b, _ := os.ReadFile(p)
		f.Add(string(b), false)
	}
	f.Add("group.instance.id=pod-1\ntransactional.id=t\n", true)
	f.Fuzz(func(t *testing.T, text string, one bool) {
		if len(text) > 20000 {
			return
		}
		s := checkedSession(t)
		s.Dir = t.TempDir()
		mustExec(t, s, "new --members 2; step 2")
		line := "set --from c.properties"
		if one {
			line += " --client C2"
		}
		out, ok := execSupplied(t, s, "c.properties", text, line)
		if !ok {
			return
		}
		props, perr := kafkafmt.ParseProperties(strings.NewReader(text))
		if perr != nil {
			t.Fatalf("set --from took a file ParseProperties refuses: %v", perr)
		}
		for _, k := range props.Keys() {
			if !strings.Contains(out, ": "+k+"=") && !strings.Contains(out, ": ("+k+"=") {
				t.Fatalf("key %q is not listed:\n%s", k, out)
			}
		}
		mustExec(t, s, "step 4")
		want := threeViews(t, s) + strings.Join(s.World().Cfg.SetLines(), "\n")
		mustExec(t, s, "back 4; step 4")
		if got := threeViews(t, s) + strings.Join(s.World().Cfg.SetLines(), "\n"); got != want {
			t.Fatalf("replayed:\n%s\nwant:\n%s", got, want)
		}
	})
}

// execSupplied runs line with the file name reading text, as a fuzz target
// does; a refusal must be no internal error and leave the session as it
// was, and then ok is false.
func execSupplied(t *testing.T, s *Session, name, text, line string) (out string, ok bool) {
	t.Helper()
	before := sessionSnapshot(t, s)
	s.supply = &fileRead{name: name, text: text}
	out, err := s.Exec(line)
	if err != nil {
		if strings.Contains(err.Error(), "internal error") {
			t.Fatal(err)
		}
		if sessionSnapshot(t, s) != before {
			t.Fatalf("refused (%v), and the session changed", err)
		}
		return "", false
	}
	return out, true
}

// TestShowConfigKeys: show config KEY... lists those settings alone, each
// with its per-client rows; a key that is not a setting is refused by
// name, with the settings there are, even beside one that is; a client's
// row is named as C2.KEY.
func TestShowConfigKeys(t *testing.T) {
	s := NewSession()
	runLines(t, s, "new --kafka-defaults\nset C2.linger.ms 0")
	out, err := s.Exec("show config linger.ms session.timeout.ms")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, l := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(strings.TrimPrefix(l, "*")); len(f) == 4 {
			keys = append(keys, f[0])
		}
	}
	if want := []string{"linger.ms", "session.timeout.ms", "C2.linger.ms"}; !slices.Equal(keys, want) {
		t.Errorf("show config linger.ms session.timeout.ms listed %q, want %q:\n%s", keys, want, out)
	}
	if got := s.Complete("show config linger.ms sess"); !slices.Equal(got, []string{"session.timeout.ms"}) {
		t.Errorf("Tab after show config linger.ms sess offers %q, want session.timeout.ms", got)
	}
	if out, err := s.Exec("show config C2.linger.ms"); err != nil || strings.Count(out, "linger.ms") != 1 {
		t.Errorf("show config C2.linger.ms: %v\n%s\nwant C2's row alone", err, out)
	}
	for _, line := range []string{"show config timeout.ms", "show config session.timeout.ms timeout.ms", "show config C9.linger.ms"} {
		_, err := s.Exec(line)
		if err == nil || !strings.Contains(err.Error(), "no setting ") || !strings.Contains(err.Error(), "(settings: auto.commit.interval.ms ") {
			t.Errorf("%s: %v, want it refused naming the key and the settings", line, err)
		}
	}
}
