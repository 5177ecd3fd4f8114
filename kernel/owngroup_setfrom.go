package kernel

// set --from FILE.properties: each key of a client's configuration
// applied to the world, refused with Kafka's reason, or listed as ignored.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/kernel/kafkafmt"
	"github.com/kgrepl/kgrepl/sim"
)

// What set --from does with one key of the file.
const (
	fileApplied    = "applied"
	fileNotApplied = "not applied"
	fileIgnored    = "ignored"
)

// fileKey is one key of a .properties file and what set --from does with
// it: the setting it sets (applied), or why not.
type fileKey struct {
	entry      kafkafmt.Entry
	verdict    string
	key, value string // the kgrepl setting and value applied
	why        string
}

func (k fileKey) String() string {
	e := k.entry
	s := fmt.Sprintf("line %d: %s=%s: %s", e.Line, e.Key, e.Value, k.verdict)
	if e.Implied {
		s = fmt.Sprintf("line %d: (%s=%s, implied): %s", e.Line, e.Key, e.Value, k.verdict)
	}
	if k.verdict == fileApplied {
		s += ": set " + k.key + " " + k.value
	}
	if k.why != "" {
		s += ": " + k.why
	}
	return s + kafkafmt.EarlierNote(e.Earlier)
}

// msKeys are the modelled keys Kafka counts in milliseconds.
var msKeys = map[string]bool{"session.timeout.ms": true, "max.poll.interval.ms": true, "auto.commit.interval.ms": true,
	"request.timeout.ms": true, "retry.backoff.ms": true, "transaction.timeout.ms": true}

// msReading says how a real-time world reads a .ms value: as whole ticks,
// rounded up where it falls between two ("" when the value is no time:
// Config.Set refuses it with the rule).
func msReading(cfg *sim.Config, v string) string {
	n, err := strconv.Atoi(v)
	if err != nil || n < cfg.TickMS {
		return ""
	}
	t := cfg.Ticks(n)
	if t*cfg.TickMS == n {
		return fmt.Sprintf("%s = %d tick(s) of %d ms", durationText(int64(n)), t, cfg.TickMS)
	}
	return fmt.Sprintf("%s, rounded up to %d tick(s) of %d ms (%s)", durationText(int64(n)), t, cfg.TickMS, durationText(int64(t*cfg.TickMS)))
}

// decideFileKey says what set --from does with one classified key, for
// every member (client "") or one. It applies only what means in kgrepl
// what it means to Kafka's client.
//
// cfg is the configuration the file is being applied to: the world's, with
// the keys decided before this one applied (a file's max.poll.records is
// weighed against its own max.poll.interval.ms).
func decideFileKey(w *sim.World, cfg *sim.Config, e kafkafmt.Entry, client string, compared map[string]bool) fileKey {
	k := fileKey{entry: e}
	notApplied := func(why string) fileKey { k.verdict, k.why = fileNotApplied, why; return k }
	applied := func(key, value, why string) fileKey {
		k.verdict, k.key, k.value, k.why = fileApplied, key, value, why
		return k
	}
	kafkaNote := func(why string) string {
		if why == "" {
			return e.Reason
		}
		if e.Reason != "" {
			return why + "; " + e.Reason
		}
		return why
	}
	switch e.Kind {
	case kafkafmt.Ignored:
		k.verdict, k.why = fileIgnored, "kgrepl does not model "+e.Key
		if e.Reason != "" {
			k.why += ": " + e.Reason
		}
		return k
	case kafkafmt.Unknown:
		k.verdict, k.why = fileIgnored, e.Reason
		return k
	case kafkafmt.Unsupported:
		if (e.Key == "group.instance.id" || e.Key == "transactional.id") && client == "" {
			break // a value filled in per process: per-member, below
		}
		return notApplied(e.Reason)
	}
	for _, st := range compareSettings(e.Setting) {
		if compared[st] {
			return notApplied("compare sets " + st + " in each of its rows")
		}
	}
	switch key := e.Setting; {
	case msKeys[key] && cfg.Time != sim.TimeMS:
		now, _ := cfg.Get(client, key)
		return notApplied(kafkaNote(fmt.Sprintf("this world counts every .ms setting in ticks (the page's scale: %s is %s ticks here), so %s would be %s ticks; set %s N sets it in ticks (or set time ms first)",
			key, now, e.Value, e.Value, key)))
	case msKeys[key]:
		// Real time: milliseconds as Kafka counts them, under set's rules
		// (Config.Set rounds up to whole ticks, refuses less than one).
		return applied(key, e.SettingValue, kafkaNote(msReading(cfg, e.SettingValue)))
	case key == "max.poll.records":
		// The count means what it means to Kafka, but a batch is
		// processed a record at a time, and a batch that outlasts
		// max.poll.interval.ms makes every member leave the group
		// mid-batch. Compared in ticks, as the engine runs them (on the
		// page's scale the file's own timeouts, in milliseconds, are not
		// applied, so the page's short interval holds).
		n, _ := strconv.Atoi(e.SettingValue)
		eng := cfg.Engine(client) // the processing time as the engine runs it: N ticks for K records, exactly
		interval, ticks, recs := eng.MaxPollInterval, max(eng.ProcessTicks, 1), max(eng.ProcessRecords, 1)
		// A batch of n records takes ceil(n x ticks / recs) ticks; the
		// most that fit below the interval is floor((interval-1) x recs / ticks).
		if batch := (n*ticks + recs - 1) / recs; n > 0 && batch >= interval {
			below := (interval-1)*recs/ticks + 1
			if cfg.Time == sim.TimeMS {
				pms, _ := cfg.Get(client, "processing.ms")
				ims, _ := cfg.Get(client, "max.poll.interval.ms")
				return notApplied(fmt.Sprintf("a batch of %d records takes %d ticks here (processing.ms %s, tick.ms %d), past max.poll.interval.ms %s, %d ticks: every member would leave the group in the middle of each batch (set max.poll.records below %d, or raise max.poll.interval.ms or lower processing.ms)",
					n, batch, pms, cfg.TickMS, ims, interval, below))
			}
			pt, _ := cfg.Get(client, "processing.ticks")
			return notApplied(fmt.Sprintf("a batch of %d records takes %d ticks here (processing.ticks %s), past max.poll.interval.ms, %d ticks: every member would leave the group in the middle of each batch, where Kafka's milliseconds leave it time; this world counts ticks (set max.poll.records below %d, or raise max.poll.interval.ms)",
				n, batch, pt, interval, below))
		}
	case key == "isolation.level":
		return notApplied("a member reads input topics no transactional producer writes, where both levels read the same; kgrepl's isolation.level is its audit reader's, which reads invoices as another application would (set isolation.level sets it)")
	case (key == "group.instance.id" || key == "transactional.id") && client == "":
		what := "its client id"
		if key == "transactional.id" {
			what = "tx- and its client id"
		}
		return applied(key, sim.PerMember, fmt.Sprintf("one file is one member's, and one %s on every member would have Kafka fence all but one; each member gets its own, %s, as a deployment gives each pod its own (set --from FILE --client Cn takes the file as Cn's alone)", key, what))
	case key == "partition.assignment.strategy":
		// The list as written, in order: the group votes over the
		// members' lists (ClassicGroup.selectProtocol), and a member is
		// cooperative only if every assignor it lists is.
		when := "every running member takes it at once (the page's shortcut; Kafka's consumer reads the list when it is created, so a real group changes it by a rolling restart: demo 16)"
		if client != "" {
			when = "its next process takes it (restart " + client + "): Kafka's consumer reads the list when it is created"
		}
		return applied(key, e.SettingValue, kafkaNote(when))
	case key == "group.protocol" || key == "group.remote.assignor":
		return applied(key, e.SettingValue, kafkaNote("a member takes it when it next starts (restart Cn, or new --keep-settings)"))
	case key == "enable.auto.commit" && e.SettingValue == "false":
		return applied(key, e.SettingValue, "the application commits itself: kgrepl's members commit after processing each batch (set commit before for the other way)")
	}
	if key := e.Setting; key == "group.instance.id" || key == "transactional.id" {
		// One member's own id, as written: say who holds it already.
		var holders []string
		for _, c := range w.Clients() {
			cc := w.Cfg.ForClient(c)
			id := cc.InstanceID
			if key == "transactional.id" {
				id = cc.TransactionalID
			}
			if c != client && id == e.SettingValue {
				holders = append(holders, c)
			}
		}
		if len(holders) > 0 {
			return applied(key, e.SettingValue, fmt.Sprintf("%s holds %s too: when %s next starts, Kafka fences the one that started first with it", strings.Join(holders, " "), e.SettingValue, client))
		}
	}
	return applied(e.Setting, e.SettingValue, e.Reason)
}

// checkClientFile refuses a file that is not a client's configuration at
// all: one that sets no key, or none Kafka's consumer or producer knows
// (kafka-consumer-groups.sh output, a log, a broker's server.properties,
// a Streams config's prefixed keys). java.util.Properties reads any text
// as keys and values, and Kafka would pass each unknown key on to its
// plugins; but applying nothing from such a file, key by key, would hide
// that it is the wrong file. One known key is enough: a file that sets
// only group.protocol is a client's.
func checkClientFile(cmd string, c *kafkafmt.Classification) error {
	if len(c.Entries) == 0 {
		return fmt.Errorf("%s: the file sets no key (a client's .properties is key=value lines, as java.util.Properties reads them), so there is nothing to apply", cmd)
	}
	var lines []string
	for _, e := range c.Entries {
		if e.Kind != kafkafmt.Unknown {
			return nil
		}
		if len(lines) < maxListedKeys {
			lines = append(lines, fmt.Sprintf("  line %d: %s: %s", e.Line, shortKey(e.Key), e.Reason))
		}
	}
	if n := len(c.Entries) - len(lines); n > 0 {
		lines = append(lines, fmt.Sprintf("  and %d more key(s) of the same kind", n))
	}
	return fmt.Errorf("%s: no key of the file is a config of Kafka 4.0's consumer or producer, so it is not a client's .properties and nothing is applied (a client's file sets keys such as group.id, group.protocol, session.timeout.ms; kafka-consumer-groups.sh --describe output is read by new --from-describe FILE):\n%s",
		cmd, strings.Join(lines, "\n"))
}

// maxListedKeys is how many keys checkClientFile's refusal names.
const maxListedKeys = 5

// shortKey quotes a key for an error, cut to a readable length (a line of
// a table read as a key can be long).
func shortKey(k string) string {
	const max = 40
	if r := []rune(k); len(r) > max {
		return strconv.Quote(string(r[:max])) + "..."
	}
	return strconv.Quote(k)
}

// cmdSetFrom is set --from FILE [--client Cn]: a client's .properties,
// key by key. A file Kafka's client would refuse is refused whole; else
// each key is applied (what means in kgrepl what it means to Kafka),
// not applied (with why), or ignored (kgrepl does not model it, or Kafka
// does not know it), and every key is listed.
func cmdSetFrom(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("set", args, []string{"--from", "--client"}, nil)
	if err != nil {
		return nil, err
	}
	file, ok := fl["--from"]
	switch {
	case !ok:
		return nil, usageErr("set", "--client Cn goes with --from FILE (set Cn.KEY VALUE sets one key)")
	case len(pos) > 0:
		return nil, usageErr("set", "unexpected %q after --from FILE", pos[0])
	}
	cmd := "set --from " + file
	client := fl["--client"]
	if _, given := fl["--client"]; given && !sim.IsClientID(client) {
		return nil, usageErr("set", "--client %q is not a client id (C1 to C999999)", client)
	}
	raw, _, err := s.readFile(cmd, file, kafkafmt.MaxPropertiesBytes, "properties file", propertiesText)
	if err != nil {
		return nil, err
	}
	props, err := kafkafmt.ParseProperties(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %v (a client's .properties, as java.util.Properties reads it)", cmd, err)
	}
	c := kafkafmt.Classify(props)
	var refused []string
	for _, e := range c.Entries {
		if e.Kind == kafkafmt.Invalid {
			refused = append(refused, "  "+e.String())
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("%s: Kafka's client would refuse this configuration, so nothing is applied:\n%s", cmd, strings.Join(refused, "\n"))
	}
	if err := checkClientFile(cmd, c); err != nil {
		return nil, err
	}
	w := s.World()
	// Each applied key is tried on a copy first: a value Kafka takes and
	// kgrepl's setting does not (more records a poll than a world holds)
	// is not applied, and says why.
	probe := w.Cfg.Clone()
	// max.poll.records is decided last, against the timeouts the file
	// sets wherever they stand in it (java.util.Properties has no order).
	keys := make([]fileKey, len(c.Entries))
	counts := map[string]int{}
	// applied is the order the probe took the applied keys in, which the
	// world takes them in too.
	var applied []int
	// heartbeat.interval.ms must stay below session.timeout.ms at every
	// set (sim's checkHeartbeat): when the file lowers both, one order
	// passes and the other not, so a key refused for that alone is tried
	// again after the rest (the file's pair itself was checked with
	// Kafka's rule above).
	var again []int
	for _, last := range []bool{false, true} {
		for i, e := range c.Entries {
			if (e.Setting == "max.poll.records") != last {
				continue
			}
			k := decideFileKey(w, &probe, e, client, s.compareKeys)
			if k.verdict == fileApplied {
				if err := probe.Set(client, k.key, k.value); err != nil {
					if !last && strings.Contains(err.Error(), sim.HeartbeatRule) {
						keys[i] = k
						again = append(again, i)
						continue
					}
					k.verdict, k.why = fileNotApplied, "kgrepl's "+err.Error()
				} else {
					applied = append(applied, i)
				}
			}
			keys[i] = k
			counts[k.verdict]++
		}
		if !last {
			for _, i := range again {
				k := keys[i]
				if err := probe.Set(client, k.key, k.value); err != nil {
					k.verdict, k.why = fileNotApplied, "kgrepl's "+err.Error()
				} else {
					applied = append(applied, i)
				}
				keys[i] = k
				counts[k.verdict]++
			}
		}
	}
	for _, i := range applied {
		k := keys[i]
		if err := w.Set(client, k.key, k.value); err != nil {
			return nil, fmt.Errorf("%s: line %d: %v", cmd, k.entry.Line, err)
		}
	}
	if n := len(w.Cfg.Overrides); client != "" && n > limitOverrides.max {
		return nil, limitOverrides.checkf(cmd, n, fmt.Sprintf("%d per-client settings", n))
	}
	who := "every member"
	if client != "" {
		who = client + " alone"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %d applied, %d not applied, %d ignored", cmd, who, counts[fileApplied], counts[fileNotApplied], counts[fileIgnored])
	for _, k := range keys {
		b.WriteString("\n" + k.String())
	}
	return &Result{Text: b.String()}, nil
}
