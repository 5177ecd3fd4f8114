// config_time.go: a world's clock (time ticks or time ms, tick.ms) and how
// its duration settings become the ticks the engine runs (Config.Engine,
// EngineCoord), including switching the unit of every duration at once.

package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim/coord"
)

// TimeUnit is the unit of a world's duration settings.
type TimeUnit string

const (
	TimeTicks TimeUnit = "ticks" // the page's scale: every .ms setting counts ticks
	TimeMS    TimeUnit = "ms"    // real time: .ms settings are milliseconds, a tick lasts tick.ms
)

// DefaultTickMS is tick.ms's default: a tick is one message's flight, and
// 5 ms is what a request to a broker in the same region takes with
// Kafka 4.0's defaults (linger.ms 5, a network round trip and an acks=all
// write of well under 5 ms), so every message's latency stays realistic:
// a JoinGroup, a commit or a produce answered in 10 ms.
const DefaultTickMS = 5

// MaxTickMS bounds tick.ms: a message longer than a second in flight is an
// outage, not a latency. MinTickMS: a message between a client and a
// broker (a request through the network and the broker's handling) takes
// about a millisecond at the least, so a finer tick would make every
// message faster than messages can be.
const (
	MinTickMS = 1
	MaxTickMS = 1000
)

// MaxDurationMS is the largest millisecond value a duration setting takes:
// Kafka's own bound for its int-typed .ms configs (Integer.MAX_VALUE).
const MaxDurationMS = 2147483647

// maxDurationTicks is the largest value a duration setting takes in ticks.
const maxDurationTicks = 1_000_000

// Ticks gives a duration setting's value in ticks: itself on the page's
// scale, and in real time rounded up to whole ticks.
func (c *Config) Ticks(v int) int {
	if c.Time != TimeMS || v <= 0 {
		return v
	}
	return (v + c.TickMS - 1) / c.TickMS
}

// Engine is a client's configuration as the engine runs it: the
// client's settings (ForClient) with every duration in ticks, rounded up,
// and the processing time exactly (N ms for K records is N ticks for
// K x tick.ms records, ProcessingMSToTicks: never rounded, so 0.1 ms a
// record is 50 records in a 5 ms tick).
func (c *Config) Engine(client string) ClientConfig {
	cc := c.ForClient(client)
	if c.Time == TimeMS {
		for _, f := range clientDurations(&cc) {
			*f = c.Ticks(*f)
		}
		cc.ProcessTicks, cc.ProcessRecords = ProcessingMSToTicks(cc.ProcessTicks, cc.ProcessRecords, c.TickMS)
	}
	return cc
}

// EngineCoord is the broker's group settings as the coordinator runs them:
// every duration in ticks.
func (c *Config) EngineCoord() coord.Config {
	g := c.Config
	if c.Time == TimeMS {
		for _, f := range worldDurations(&g) {
			*f = c.Ticks(*f)
		}
	}
	return g
}

func clientDurations(cc *ClientConfig) []*int {
	return []*int{&cc.SessionTimeout, &cc.MaxPollInterval, &cc.AutoCommitInterval, &cc.TransactionTimeout,
		&cc.RetryBackoff, &cc.RequestTimeout, &cc.SlowTicks, &cc.HeartbeatInterval, &cc.Linger}
}

func worldDurations(g *coord.Config) []*int {
	return []*int{&g.InitialRebalanceDelay, &g.ConsumerHeartbeatInterval, &g.ConsumerSessionTimeout}
}

// duration reads a duration setting's value in the world's unit: whole
// ticks from min on the page's scale; in real time whole milliseconds, at
// least one tick (0 where min allows it: none).
func (c *Config) duration(key, v string, min int) (int, error) {
	n, err := strconv.Atoi(v)
	if c.Time != TimeMS {
		if err != nil || n < min || n > maxDurationTicks {
			return 0, fmt.Errorf("%s: %q is not a whole number from %d to %d", key, v, min, maxDurationTicks)
		}
		return n, nil
	}
	if err != nil || n < min || n > MaxDurationMS {
		return 0, fmt.Errorf("%s: %q is not a whole number of milliseconds from %d to %d", key, v, max(min, c.TickMS), MaxDurationMS)
	}
	if n > 0 && n < c.TickMS {
		return 0, fmt.Errorf("%s: %d ms is less than one tick (tick.ms %d): a duration is at least one tick and rounds up to whole ticks; give at least %d, or a finer tick (set tick.ms)", key, n, c.TickMS, c.TickMS)
	}
	return n, nil
}

// setTime switches the unit of every duration, converting each (the
// client-wide ones in c, the broker's and every override in w), so that
// the world runs exactly as before: a duration of n ticks is n x tick.ms
// milliseconds, and back; the processing time, a fraction, converts
// exactly both ways (convertProcessing).
func (w *Config) setTime(c *ClientConfig, to TimeUnit) error {
	if to != TimeTicks && to != TimeMS {
		return fmt.Errorf("time: %q is not ticks or ms", string(to))
	}
	if to == w.Time {
		return nil
	}
	conv := func(v int) int {
		if to == TimeMS {
			return v * w.TickMS
		}
		return (v + w.TickMS - 1) / w.TickMS
	}
	cc, g := *c, w.Config
	var past []string
	check := func(name string, v int) {
		if to == TimeTicks && v > maxDurationTicks {
			past = append(past, fmt.Sprintf("%s (%d ticks)", name, v))
		}
	}
	for i, f := range clientDurations(&cc) {
		*f = conv(*f)
		check(clientDurationKeys[i], *f)
	}
	var err error
	var proc []string // processing times the page's scale cannot hold
	if cc.ProcessTicks, cc.ProcessRecords, err = w.convertProcessing(cc.ProcessTicks, cc.ProcessRecords, to); err != nil {
		proc = append(proc, "processing.ms "+err.Error())
	}
	for i, f := range worldDurations(&g) {
		*f = conv(*f)
		check(worldDurationKeys[i], *f)
	}
	hist := w.HistoryTicks
	if hist > 0 {
		hist = conv(hist)
		check(historyKey, hist)
	}
	var over []Override // a new array: a copy of this Config may share the old one
	if len(w.Overrides) > 0 {
		over = make([]Override, len(w.Overrides))
	}
	for i, o := range w.Overrides {
		if _, ok := overrideDurations[o.Key]; ok {
			n, _ := strconv.Atoi(o.Value) // validated when it was set
			o.Value = strconv.Itoa(conv(n))
			check(o.Client+"."+o.Key, conv(n))
		}
		if o.Key == processingKey {
			n, k, _ := w.parseProcessing(o.Value) // validated when it was set
			if n, k, err = w.convertProcessing(n, k, to); err != nil {
				proc = append(proc, o.Client+".processing.ms "+err.Error())
			}
			o.Value = formatProcessing(n, k, to)
		}
		over[i] = o
	}
	if len(past) > 0 {
		return fmt.Errorf("time ticks: %s would be past %d ticks, the most a duration counts on the page's scale (tick.ms %d); lower them first", strings.Join(past, ", "), maxDurationTicks, w.TickMS)
	}
	if len(proc) > 0 {
		return fmt.Errorf("time ticks: %s: processing.ticks takes N/K with each at most %d; change them first", strings.Join(proc, "; "), maxProcessingTerm)
	}
	*c, w.Config, w.Overrides, w.Time, w.HistoryTicks = cc, g, over, to, hist
	return nil
}

// historyKey is history.ms, the world's history window (Config.HistoryTicks).
const historyKey = "history.ms"

// HistoryWindow is the ticks of its past a world keeps in detail
// (history.ms, rounded up to whole ticks in real time): 0 keeps all.
func (c *Config) HistoryWindow() int {
	if c.HistoryTicks <= 0 {
		return 0
	}
	return c.Ticks(c.HistoryTicks)
}

// Names of the durations, in clientDurations' and worldDurations' order.
var (
	clientDurationKeys = []string{"session.timeout.ms", "max.poll.interval.ms", "auto.commit.interval.ms", "transaction.timeout.ms",
		"retry.backoff.ms", "request.timeout.ms", "slow.processing.ms", "heartbeat.interval.ms", lingerKey}
	worldDurationKeys = []string{"group.initial.rebalance.delay.ms", "group.consumer.heartbeat.interval.ms", "group.consumer.session.timeout.ms"}
	// overrideDurations: the per-client durations by the key an override
	// keeps, each with its name in real time.
	overrideDurations = map[string]string{"session.timeout.ms": "session.timeout.ms", "max.poll.interval.ms": "max.poll.interval.ms",
		"auto.commit.interval.ms": "auto.commit.interval.ms", "transaction.timeout.ms": "transaction.timeout.ms",
		"retry.backoff.ms": "retry.backoff.ms", "request.timeout.ms": "request.timeout.ms",
		"slow.processing.ticks": "slow.processing.ms", "heartbeat.interval.ms": "heartbeat.interval.ms", lingerKey: lingerKey}
)

// lingerKey is linger.ms, the one duration that may be shorter than a
// tick: any value above 0 gathers a member's turn of a tick
// (client.ClientConfig.Linger), so in real time a linger.ms under tick.ms
// (Kafka's 5 with a tick of 20 ms) rounds up to one tick rather than
// being refused, and does not stand in the way of a longer tick.
const lingerKey = "linger.ms"

// setTickMS sets tick.ms. In real time every duration keeps its
// milliseconds and is rounded to the new tick, so none may be shorter than
// it.
func (w *Config) setTickMS(c *ClientConfig, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < MinTickMS || n > MaxTickMS {
		return fmt.Errorf("tick.ms: %q is not a whole number of milliseconds from %d to %d: a tick is one message's flight, and a message between a client and a broker takes at least %d ms (finer would make messages faster than they can be); over %d ms it is an outage, not a latency", v, MinTickMS, MaxTickMS, MinTickMS, MaxTickMS)
	}
	if w.Time == TimeMS {
		var short []string
		note := func(name string, d int) {
			if d > 0 && d < n && !strings.HasSuffix(name, lingerKey) {
				short = append(short, fmt.Sprintf("%s (%d ms)", name, d))
			}
		}
		cc, g := *c, w.Config
		for i, f := range clientDurations(&cc) {
			note(clientDurationKeys[i], *f)
		}
		for i, f := range worldDurations(&g) {
			note(worldDurationKeys[i], *f)
		}
		note(historyKey, w.HistoryTicks)
		for _, o := range w.Overrides {
			if real, ok := overrideDurations[o.Key]; ok {
				d, _ := strconv.Atoi(o.Value)
				note(o.Client+"."+real, d)
			}
		}
		if len(short) > 0 {
			return fmt.Errorf("tick.ms: a tick of %d ms is longer than %s: every duration is at least one tick; raise them first, or choose a tick of at most the shortest", n, strings.Join(short, ", "))
		}
	}
	w.TickMS = n
	return nil
}
