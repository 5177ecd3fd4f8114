package kernel

import (
	"bytes"
	"strings"
	"testing"
)

// pictureBytes runs a session's commands and returns each picture's SVG.
func pictureBytes(t *testing.T, setup string, pictures []string) map[string][]byte {
	t.Helper()
	s := pictureSession(t)
	if _, err := s.Exec(setup); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range pictures {
		r := one(t, s, p)
		if r.SVG == "" {
			t.Fatalf("%s: no SVG", p)
		}
		out[p] = []byte(r.SVG)
	}
	return out
}

var everyPicture = []string{"plot pause", "plot duplicates", "plot lag", "plot timeline", "diagram", "sequence --ticks 0..12"}

// TestPicturesOnThePageScaleIgnoreTheClock: on the page's scale tick.ms
// means nothing, so a world with another tick.ms draws every picture
// byte for byte as the default one does (the golden SVGs of kernel/chart
// and kernel/draw pin the default).
func TestPicturesOnThePageScaleIgnoreTheClock(t *testing.T) {
	const history = "join C2; crash C1 now; run until stable --quiet; step 5"
	a := pictureBytes(t, history, everyPicture)
	b := pictureBytes(t, "set tick.ms 250; "+history, everyPicture)
	for _, p := range everyPicture {
		if !bytes.Equal(a[p], b[p]) {
			t.Errorf("%s: tick.ms 250 on the page's scale changed the picture", p)
		}
		if bytes.Contains(a[p], []byte("time from the start")) {
			t.Errorf("%s: a time axis on the page's scale", p)
		}
	}
}

// TestPicturesInRealTime: in real time every picture names times: the
// charts' axes, the diagram's title and settings, the sequence's gutter
// and title, and the engine's tick counts in its notes.
func TestPicturesInRealTime(t *testing.T) {
	s := pictureSession(t)
	if _, err := s.Exec("new --kafka-defaults --members 0; join C1; join C2; run until stable --quiet; crash C2 now; run until time 1m --quiet"); err != nil {
		t.Fatal(err)
	}
	text := func(line string) string {
		r := one(t, s, line)
		if r.SVG == "" {
			t.Fatalf("%s: no picture", line)
		}
		return r.SVG
	}
	for _, p := range []string{"plot pause", "plot duplicates", "plot lag", "plot timeline"} {
		if svg := text(p); !strings.Contains(svg, "time from the start (m:ss; a tick is 5 ms: ticks 0–12000)") {
			t.Errorf("%s: no time axis", p)
		}
	}
	if svg := text("plot pause"); !strings.Contains(svg, "partition × seconds paused (total)") {
		t.Error("plot pause: the meter is not in partition x seconds")
	}
	diagram := text("diagram")
	for _, want := range []string{"group billing · 00:01:00.000 (tick 12000) · Stable · generation 2", "session.timeout 45 s", "max.poll.interval 5 min", "(partition × seconds)"} {
		if !strings.Contains(diagram, want) {
			t.Errorf("diagram: no %q", want)
		}
	}
	// C2's removal (its last heartbeat 45 s before, tick 10205), then C1
	// told at its next heartbeat's answer, 3 s later (tick 10806).
	seq := text("sequence --ticks 10200..10215")
	for _, want := range []string{"messages from 00:00:51.000 (tick 10200) to 00:00:51.075 (tick 10215)", "9000 ticks = 45 s of silence"} {
		if !strings.Contains(seq, want) {
			t.Errorf("sequence: no %q", want)
		}
	}
	seq = text("sequence --ticks 10800..10815")
	for _, want := range []string{"messages from 00:00:54.000 (tick 10800) to 00:00:54.075 (tick 10815)", ">00:00:54.040<", ">tick 10808<", "heartbeat: rebalance, rejoin"} {
		if !strings.Contains(seq, want) {
			t.Errorf("sequence: no %q", want)
		}
	}
}
