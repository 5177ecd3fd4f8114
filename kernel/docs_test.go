package kernel

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README and docs/ stay true to the program: short, their links
// resolving, their pictures what kgrepl draws now.

const (
	readmeMaxBytes   = 15 << 10 // the README is the first screen and a few more, not the reference
	readmeFirstLines = 30       // a first screen
)

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestReadme: at most 15 KB; its first screen says what kgrepl is and what
// the seed page is, shows a picture and the two commands, both still true
// (the REPL's main package and ./test.sh are there); every relative link
// of the README and of docs/ resolves.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, want at most %d: move the reference to docs/", len(readme), readmeMaxBytes)
	}
	first := strings.Join(strings.SplitN(string(readme), "\n", readmeFirstLines+1)[:readmeFirstLines], "\n")
	for _, want := range []string{"simulator of Kafka consumer groups", "the seed page", "/work/shared/seed/",
		"](docs/images/", "go run ./cmd/kgrepl", "./test.sh"} {
		if !strings.Contains(first, want) {
			t.Errorf("the README's first %d lines do not have %q", readmeFirstLines, want)
		}
	}
	if fi, err := os.Stat("../test.sh"); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("./test.sh, the README's second command: %v", err)
	}
	if _, err := os.Stat("../cmd/kgrepl/main.go"); err != nil {
		t.Errorf("go run ./cmd/kgrepl, the README's first command: %v", err)
	}
	docs, _ := filepath.Glob("../docs/*.md")
	for _, page := range append([]string{"../README.md", "../notebooks/README.md"}, docs...) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "#") {
				continue
			}
			link, _, _ = strings.Cut(link, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), link)); err != nil {
				t.Errorf("%s links to %s: %v", page, m[1], err)
			}
		}
	}
}

// TestDocsPictures runs each script in docs/images (as `kgrepl SCRIPT`
// from that folder would) and checks that every picture it writes is the
// one committed there, byte for byte. `go test ./kernel -run DocsPictures
// -rewrite` writes them anew.
func TestDocsPictures(t *testing.T) {
	scripts, _ := filepath.Glob("../docs/images/*.kg")
	if len(scripts) == 0 {
		t.Fatal("no picture scripts in docs/images")
	}
	for _, script := range scripts {
		text, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		s := NewSession()
		s.Dir = t.TempDir()
		for i, line := range strings.Split(string(text), "\n") {
			if _, err := s.Exec(line); err != nil {
				t.Fatalf("%s:%d: %v", script, i+1, err)
			}
		}
		made, _ := os.ReadDir(s.Dir)
		if len(made) == 0 {
			t.Errorf("%s draws no picture", script)
		}
		for _, f := range made {
			got, err := os.ReadFile(filepath.Join(s.Dir, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(filepath.Dir(script), f.Name())
			if rewriting() {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is not what %s draws now (%v): run go test ./kernel -run DocsPictures -rewrite and look at it", path, script, err)
			}
		}
	}
}
