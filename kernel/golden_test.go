package kernel

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Golden scripts, in the datadriven style: each block is a command line,
// a line "----", and the output it must print (an error prints as
// "error: ..."). Blocks are separated by a blank line. Run
// `go test ./kernel -rewrite` to write the outputs anew, then read the diff.
var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the golden scripts in testdata/")

type goldenBlock struct {
	cmd, want string
}

func parseGolden(t *testing.T, path string) []goldenBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []goldenBlock
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" || strings.HasPrefix(lines[i], "#") {
			continue
		}
		b := goldenBlock{cmd: lines[i]}
		i++
		if i >= len(lines) || lines[i] != "----" {
			t.Fatalf("%s:%d: want ---- after the command %q", path, i, b.cmd)
		}
		var out []string
		for i++; i < len(lines); i++ {
			// A block ends at a blank line followed by a line that is not
			// indented output, or at the end of the file. Outputs are stored
			// with every line prefixed by nothing, so a blank line inside the
			// output is written as a lone "."; see writeGolden.
			if lines[i] == "" {
				break
			}
			if lines[i] == "." {
				out = append(out, "")
			} else {
				out = append(out, lines[i])
			}
		}
		b.want = strings.Join(out, "\n")
		blocks = append(blocks, b)
	}
	return blocks
}

func writeGolden(path string, blocks []goldenBlock, header string) error {
	var b strings.Builder
	b.WriteString(header)
	for _, bl := range blocks {
		b.WriteString(bl.cmd + "\n----\n")
		for _, l := range strings.Split(bl.want, "\n") {
			if l == "" {
				l = "."
			}
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func goldenHeader(path string) string {
	data, _ := os.ReadFile(path)
	var h strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		h.WriteString(l + "\n")
	}
	if h.Len() > 0 {
		h.WriteString("\n")
	}
	return h.String()
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
		path := path
		t.Run(filepath.Base(path), func(t *testing.T) {
			blocks := parseGolden(t, path)
			s := checkedSession(t)
			s.Dir = t.TempDir()
			for i := range blocks {
				got := runBlock(s, blocks[i].cmd)
				if *rewrite {
					blocks[i].want = got
					continue
				}
				if got != blocks[i].want {
					t.Errorf("%s: %s\n--- got\n%s\n--- want\n%s", path, blocks[i].cmd, got, blocks[i].want)
				}
			}
			if *rewrite {
				if err := writeGolden(path, blocks, goldenHeader(path)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
