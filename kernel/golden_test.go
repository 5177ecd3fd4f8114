package kernel

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Golden scripts in cockroachdb/datadriven's format: a command line, a line
// "----", and the output it must print (an error prints as "error: ...");
// an output with blank lines sits between "----\n----" and "----\n----".
// `go test ./kernel -rewrite` writes the outputs anew (the flag is
// datadriven's; rewriting() reads it for this package's other golden
// files), then read the diff.

// rewriting reports whether the test runs with -rewrite, the one flag that
// rewrites this package's golden files (datadriven defines it).
func rewriting() bool {
	return flag.Lookup("rewrite").Value.(flag.Getter).Get().(bool)
}

func runBlock(s *Session, cmd string) string {
	out, err := s.Exec(cmd)
	if err != nil {
		if out != "" {
			out += "\n"
		}
		out += "error: " + err.Error()
	}
	if out == "" {
		out = "ok"
	}
	return out
}

func TestGoldenScripts(t *testing.T) {
	// help step and help run quote the heap guard's threshold, which comes
	// from the machine (heapguard.go): the goldens show this project's
	// machine's, half of 24 GiB.
	defer func(l limit) { limitHeap = l }(limitHeap)
	limitHeap.max = 12 << 30
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no golden scripts in testdata/")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
			s := checkedSession(t)
			s.Dir = t.TempDir()
			copyImportFixtures(t, s.Dir)
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				// The session reads the line datadriven parsed into a
				// command and arguments; it must read back as typed.
				cmd := d.FullCmd()
				n, _ := strconv.Atoi(d.Pos[strings.LastIndexByte(d.Pos, ':')+1:])
				if n < 1 || n > len(lines) || strings.TrimSpace(lines[n-1]) != cmd {
					d.Fatalf(t, "the command line reads back as %q: write it as datadriven would (single spaces, key=(a, b))", cmd)
				}
				// The output's own last newline, if any, is kept: datadriven
				// adds one only to an output without it.
				return runBlock(s, cmd) + "\n"
			})
		})
	}
}

// copyImportFixtures puts the files new --from-describe and set --from
// read in the golden scripts into dir, the session's folder: describe
// output and .properties files as Kafka's tools print and read them
// (kafkafmt's fixtures) and testdata/import's.
func copyImportFixtures(t *testing.T, dir string) {
	t.Helper()
	var files []string
	for _, pat := range []string{"kafkafmt/testdata/describe/*.txt", "kafkafmt/testdata/properties/*.properties", "testdata/import/*"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
