package simtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/kgrepl/kgrepl/sim"
)

// new [members=N] [group=G] [inputs=(T:P, ...)] [output=T:P] [KEY=VALUE ...] [Cn.KEY=VALUE ...]
//
// A world at tick 0: the seed's default topology unless inputs, output,
// group or members say otherwise, with the settings given applied to the
// defaults in order before the world starts (as the kernel's `set ...;
// new --keep-settings`), so that the starting members take them.
func (s *Script) handleNew(t testing.TB, d *datadriven.TestData) (string, error) {
	wantWords(t, d, 0, 0, "new [members=N] [group=G] [inputs=(T:P, ...)] [output=T:P] [[Cn.]KEY=VALUE ...]")
	topo, cfg := sim.DefaultTopology(), sim.DefaultConfig()
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "members":
			topo.Members = number(t, d, "members", a.SingleVal(t), 0)
		case "group":
			topo.Group = a.SingleVal(t)
		case "inputs":
			topo.Inputs = nil
			for _, v := range a.Vals {
				topo.Inputs = append(topo.Inputs, topicSpec(t, d, v))
			}
		case "output":
			topo.Output = topicSpec(t, d, a.SingleVal(t))
		default:
			client, key := settingKey(a.Key)
			if err := cfg.Set(client, key, a.SingleVal(t)); err != nil {
				d.Fatalf(t, "new %s: %v", a, err)
			}
		}
	}
	w, err := sim.New(topo, cfg)
	if err != nil {
		return "", err
	}
	s.w, s.check, s.traced = w, sim.NewChecker(), 0
	var ins []string
	for _, in := range topo.Inputs {
		ins = append(ins, fmt.Sprintf("%s (%d)", in.Name, in.Partitions))
	}
	return fmt.Sprintf("new world: group %s, input %s, output %s (%d), %d member(s), %d records per partition",
		topo.Group, strings.Join(ins, ", "), topo.Output.Name, topo.Output.Partitions, topo.Members, cfg.RecordsPerPartition), nil
}

// topicSpec reads NAME:PARTITIONS.
func topicSpec(t testing.TB, d *datadriven.TestData, v string) sim.TopicSpec {
	name, p, ok := strings.Cut(v, ":")
	if !ok || name == "" {
		d.Fatalf(t, "%s: topic %q: want NAME:PARTITIONS, e.g. orders:3", d.Cmd, v)
	}
	return sim.TopicSpec{Name: name, Partitions: number(t, d, "partitions of "+name, p, 1)}
}

// settingKey splits C2.group.protocol into the client and the key; a key
// without a client prefix is every client's (or the world's).
func settingKey(k string) (client, key string) {
	if c, rest, ok := strings.Cut(k, "."); ok && sim.IsClientID(c) {
		return c, rest
	}
	return "", k
}

// set [Cn.]KEY=VALUE ... | set producer=plain|idempotent|transactional
//
// World.Set for each, in order (World.SetProducer for producer=): live
// members take a setting as World.Set says.
func (s *Script) handleSet(t testing.TB, d *datadriven.TestData) (string, error) {
	wantWords(t, d, 0, 0, "set [Cn.]KEY=VALUE ...")
	if len(d.CmdArgs) == 0 {
		d.Fatalf(t, "set: want [Cn.]KEY=VALUE ...")
	}
	return s.input(func() error {
		for _, a := range d.CmdArgs {
			if a.Key == "producer" {
				if err := s.w.SetProducer(a.SingleVal(t)); err != nil {
					return err
				}
				continue
			}
			client, key := settingKey(a.Key)
			if err := s.w.Set(client, key, a.SingleVal(t)); err != nil {
				return fmt.Errorf("set %s: %v", a, err)
			}
		}
		return nil
	})
}

// join Cn [static] [topics=(T, ...)]
func (s *Script) handleJoin(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 1, 2, "join Cn [static] [topics=(T, ...)]")
	static := len(ws) == 2
	if static && ws[1] != "static" {
		d.Fatalf(t, "join: %q: want static or nothing", ws[1])
	}
	topics := options(t, d, "topics")["topics"]
	return s.input(func() error { return s.w.Join(ws[0], static, topics) })
}

// close Cn [now]: Close, or CloseNow.
func (s *Script) handleClose(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 1, 2, "close Cn [now]")
	if len(ws) == 2 {
		if ws[1] != "now" {
			d.Fatalf(t, "close: %q: want now or nothing", ws[1])
		}
		return s.input(func() error { return s.w.CloseNow(ws[0]) })
	}
	return s.input(func() error { return s.w.Close(ws[0]) })
}

// crash Cn now | crash Cn after=N
func (s *Script) handleCrash(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 1, 2, "crash Cn now, or crash Cn after=N")
	after := options(t, d, "after")["after"]
	switch {
	case len(ws) == 2 && ws[1] == "now" && after == nil:
		return s.input(func() error { return s.w.CrashNow(ws[0]) })
	case len(ws) == 1 && len(after) == 1:
		n := number(t, d, "after", after[0], 1)
		return s.input(func() error { return s.w.CrashAfter(ws[0], n) })
	}
	d.Fatalf(t, "crash: want crash Cn now, or crash Cn after=N")
	return "", nil
}

// restart Cn
func (s *Script) handleRestart(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 1, 1, "restart Cn")
	return s.input(func() error { return s.w.Restart(ws[0]) })
}

// slow Cn: its next record is slow.
func (s *Script) handleSlow(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 1, 1, "slow Cn")
	return s.input(func() error { return s.w.Slow(ws[0]) })
}

// produce PARTITION N: N upstream records appended to an input partition.
func (s *Script) handleProduce(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 2, 2, "produce PARTITION N")
	tp, err := s.w.Layout().ParsePartition(ws[0])
	if err != nil {
		d.Fatalf(t, "produce: %v", err)
	}
	n := number(t, d, "N", ws[1], 1)
	return s.input(func() error { return s.w.ProduceInput(tp, n) })
}

// drop TYPE [response] [from=Cn | to=Cn] [count=N]: the next matching
// packet(s) are lost (a request from Cn, or an answer to Cn).
func (s *Script) handleDrop(t testing.TB, d *datadriven.TestData) (string, error) {
	ws := wantWords(t, d, 1, 2, "drop TYPE [response] [from=Cn | to=Cn] [count=N]")
	r := sim.DropRule{Count: 1}
	for _, a := range sim.APIs {
		if string(a) == ws[0] {
			r.Type = a
		}
	}
	if r.Type == "" {
		d.Fatalf(t, "drop: no message type %q", ws[0])
	}
	if len(ws) == 2 {
		if ws[1] != "response" {
			d.Fatalf(t, "drop: %q: want response or nothing", ws[1])
		}
		r.Response = true
	}
	opts := options(t, d, "from", "to", "count")
	if v, ok := opts["from"]; ok {
		r.From = v[0]
	}
	if v, ok := opts["to"]; ok {
		r.To = v[0]
	}
	if v, ok := opts["count"]; ok {
		r.Count = number(t, d, "count", v[0], 1)
	}
	s.w.Drop(r)
	return "", nil
}
