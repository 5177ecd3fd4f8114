package nb

import (
	"regexp"
	"strings"
	"testing"
)

func TestScrubDrawsEveryTickOfTheWindow(t *testing.T) {
	s, out := session(t)
	if err := s.Quiet("join C2; run until stable"); err != nil {
		t.Fatal(err)
	}
	sc, err := s.k.Scrub("", 0, 14)
	if err != nil {
		t.Fatal(err)
	}
	if sc.From != 0 || sc.To != 14 || sc.Branch != "main" || len(sc.Trace) != 15 || len(sc.PauseX) != 15 {
		t.Fatalf("scrub of 0..14: from %d to %d branch %s, %d traces, %d cursor places", sc.From, sc.To, sc.Branch, len(sc.Trace), len(sc.PauseX))
	}
	for k, x := range sc.PauseX {
		if x <= 0 || x >= 1 || (k > 0 && x <= sc.PauseX[k-1]) {
			t.Errorf("tick %d's cursor at %.4f of the chart's width (after %v)", k, x, sc.PauseX[:k])
		}
	}
	// What each tick did, as the trace says it: C2 starts at 0, the coordinator forms generation 2 at 9.
	if !strings.HasPrefix(sc.Trace[0], "t=0\n  C2 started") || !strings.Contains(sc.Trace[0], "C2 → B1 FindCoordinator") {
		t.Errorf("tick 0:\n%s", sc.Trace[0])
	}
	if !strings.Contains(sc.Trace[9], "generation 2: leader C1-1") || !strings.Contains(sc.Trace[9], "B1 → C1 JoinGroup response: gen 2") {
		t.Errorf("tick 9:\n%s", sc.Trace[9])
	}
	if !strings.Contains(sc.Diagram, "<svg") || !strings.Contains(sc.Pause, "<svg") {
		t.Error("no diagram or no pause meter")
	}

	h := scrubHTML(sc)
	for _, want := range []string{`data-from="0" data-frames="15"`, `class="kgrepl-scrub-slider"`, `max="14"`, `class="kgrepl-scrub-play"`, `class="kgrepl-scrub-cursor"`} {
		if !strings.Contains(h, want) {
			t.Errorf("the page has no %s", want)
		}
	}
	if n := len(regexp.MustCompile(`<pre class="kgrepl-text" data-tick="\d+"`).FindAllString(h, -1)); n != 15 {
		t.Errorf("%d ticks' traces in the page, want 15", n)
	}
	// Without a script the last tick's trace shows and the others are hidden.
	if !strings.Contains(h, `data-tick="14" style="margin:0"`) || strings.Count(h, `style="display:none;margin:0"`) != 14 {
		t.Error("the page does not show the last tick's trace alone")
	}
	if strings.Count(h, "<script>") != 1 || strings.Count(h, "</script>") != 1 || !strings.Contains(h, "getAnimations") {
		t.Error("the page has not exactly one script, the slider's")
	}
	if strings.Count(h, `class="kgrepl-picture"`) != 2 {
		t.Errorf("%d pictures, want the diagram and the pause meter", strings.Count(h, `class="kgrepl-picture"`))
	}

	out.Reset()
	if err := s.Scrub("--ticks 8..12"); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "scrub: ticks 8..12 of branch main, a frame per tick\nt=8\n") || !strings.Contains(got, "\nt=12\n") {
		t.Errorf("Scrub printed:\n%s", got)
	}
	// It is a view: the session is where it was.
	if s.k.World().Tick != 14 || len(s.history) != 1 {
		t.Errorf("after Scrub: tick %d, history %q", s.k.World().Tick, s.history)
	}
}

func TestScrubRefusesAWindowItCannotDraw(t *testing.T) {
	s, _ := session(t)
	if err := s.Quiet("step 130"); err != nil {
		t.Fatal(err)
	}
	for opts, want := range map[string]string{
		"--ticks 5..5":     "at least two ticks",
		"--ticks 0..130":   "131 ticks, and a slider holds at most 120",
		"--ticks 100..140": "the branch is at tick 130",
		"--ticks 9":        "want --ticks A..B",
		"--tick 1..2":      "want --ticks A..B",
		"--ticks x..4":     "want --ticks A..B",
	} {
		if err := s.Scrub(opts); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Scrub(%q): %v, want an error saying %q", opts, err, want)
		} else if s.Err() != err {
			t.Errorf("Scrub(%q): Err() is not the error", opts)
		}
	}
	// Without --ticks: the last 120 ticks; --branch draws another branch than the one in use.
	if err := s.Quiet("fork b; step 2; switch main"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts           string
		branch         string
		from, to, tick int
	}{{"", "main", 11, 130, 130}, {"--ticks 125..", "main", 125, 130, 130}, {"--branch b --ticks 128..", "b", 128, 132, 130}, {"--ticks ..20 --branch b", "b", 0, 20, 130}} {
		branch, from, to, err := scrubOptions(c.opts)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := s.k.Scrub(branch, from, to)
		if err != nil {
			t.Fatalf("Scrub(%q): %v", c.opts, err)
		}
		if sc.Branch != c.branch || sc.From != c.from || sc.To != c.to || s.k.Branch() != "main" || s.k.World().Tick != c.tick {
			t.Errorf("Scrub(%q): branch %s ticks %d..%d, then on %s at %d", c.opts, sc.Branch, sc.From, sc.To, s.k.Branch(), s.k.World().Tick)
		}
	}
}
