package kernel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// A session file is data, not a program (SPEC §9): the branch's origin (its
// settings as `set` lines, then its `new`) and its world inputs, one a line,
// each step as the ticks it really advanced; then an end line with the
// count, the tick and a SHA-256 of everything before it, so a truncated or
// altered file is refused. Version 1 files (no end line; `new` kept the
// settings before it) still load, with their steps replayed as exact tick
// counts; save always writes version 2.
const (
	sessionHeader   = "# kgrepl session v2"
	sessionHeaderV1 = "# kgrepl session v1"
)

// maxSessionFile bounds what load reads, and so what save writes: far more
// than any session typed by hand (a line is a few dozen bytes). A variable
// so that tests can reach it with a short session.
var maxSessionFile = 8 << 20

// scriptLine is one command of a branch's script, with what it read from
// a file (new --from-describe, set --from), if it did.
type scriptLine struct {
	line string
	file *fileRead
}

// scriptLines renders the branch as commands that make it again: the
// origin's settings, its new, then every input. A step whose command as
// typed was not `step N` keeps it in a comment, for compare. With asTyped,
// each step is the command as typed instead (`run until stable`), so that
// compare's rerun keeps its intent under other settings.
func (b *branch) scriptLines(asTyped bool) []scriptLine {
	o := b.hist.origin
	var lines []scriptLine
	for _, l := range o.cfg.SetLines() {
		lines = append(lines, scriptLine{line: l})
	}
	nl := o.newLine
	if len(lines) > 0 {
		nl += " --keep-settings"
	}
	lines = append(lines, scriptLine{line: nl, file: o.file})
	for _, in := range b.hist.inputs {
		switch {
		case !in.step:
			lines = append(lines, scriptLine{line: in.line, file: in.file})
		case asTyped && in.typed != "":
			lines = append(lines, scriptLine{line: in.typed})
		case in.ticks == 0:
			// a run that was already done: nothing to replay
		default:
			l := "step " + strconv.Itoa(in.ticks)
			if !asTyped && in.typed != "" && in.typed != l {
				l += "  # " + in.typed
			}
			lines = append(lines, scriptLine{line: l})
		}
	}
	return lines
}

// A command that read a file is followed, in a session file and in a
// script, by what it read: a line "#< N lines read from FILE" and the N
// lines of the text, each after "#| " ("#|" alone for an empty line).
// They are comments to everything but load, which replays the command
// with them instead of the file.
const (
	fileBlockHead = "#< "
	fileBlockLine = "#|"
)

// scriptText writes lines one a line, each file a command read after it.
func scriptText(lines []scriptLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.line + "\n")
		if l.file == nil {
			continue
		}
		text := strings.TrimSuffix(l.file.text, "\n")
		var rows []string
		if l.file.text != "" {
			rows = strings.Split(text, "\n")
		}
		fmt.Fprintf(&b, "%s%d lines read from %s (load replays the command with these, not the file)\n", fileBlockHead, len(rows), l.file.name)
		for _, r := range rows {
			if r == "" {
				b.WriteString(fileBlockLine + "\n")
			} else {
				b.WriteString(fileBlockLine + " " + r + "\n")
			}
		}
	}
	return b.String()
}

// script is the branch as a kgrepl script (the explorer's counterexamples
// start with it). Run as a script, a command that read a file reads it
// again; the lines after it show what it read.
func (b *branch) script() string {
	return fmt.Sprintf("# branch %s at tick %d\n", b.name, b.world.Tick) + scriptText(b.scriptLines(false))
}

// sessionFile is the branch as a session file.
func (b *branch) sessionFile() []byte {
	lines := b.scriptLines(false)
	body := sessionHeader + "\n" +
		fmt.Sprintf("# branch %s at tick %d: load replays these inputs exactly; a step line is the ticks that ran\n", b.name, b.world.Tick) +
		scriptText(lines)
	return []byte(body + endLine(body, len(lines), b.world.Tick))
}

// endLine is a session file's last line: the count of its inputs, the
// tick, and a SHA-256 of body, everything before it.
func endLine(body string, lines, tick int) string {
	sum := sha256.Sum256([]byte(body))
	return fmt.Sprintf("# end: %d lines, tick %d, sha256 %s\n", lines, tick, hex.EncodeToString(sum[:]))
}

func cmdSave(s *Session, args []string) (*Result, error) {
	if err := needArgs("save", args, 1, 1); err != nil {
		return nil, err
	}
	data := s.cur.sessionFile()
	if len(data) > maxSessionFile {
		// load would refuse it: say so now, while the branch is still here.
		return nil, fmt.Errorf("save %s: the session file would be %s bytes, over the limit of a session file (%s bytes, what load reads)", args[0], group(len(data)), group(maxSessionFile))
	}
	if err := writeAtomic(s.path(args[0]), data); err != nil {
		return nil, fmt.Errorf("save %s: %v", args[0], err)
	}
	return &Result{Text: fmt.Sprintf("saved branch %s at tick %d to %s", s.cur.name, s.World().Tick, args[0])}, nil
}

// bare drops the path from an os error: the caller names the user's path.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// writeTarget is the file writeAtomic would write for path (through a
// symbolic link, the file it names) and the mode it gets (0644, or the
// mode of the file it replaces), or why it would refuse.
func writeTarget(path string) (string, fs.FileMode, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	} else if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
		// A link to nothing: the rename would replace the link itself.
		return "", 0, fmt.Errorf("it is a symbolic link to a file that is not there; save writes through a link only to an existing file")
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return "", 0, fmt.Errorf("it is %s; only a regular file is written or replaced", fileKind(st.Mode()))
	case err == nil:
		return path, st.Mode().Perm(), nil // a file replaced keeps its permissions
	case !errors.Is(err, fs.ErrNotExist):
		return "", 0, bare(err)
	}
	return path, 0o644, nil
}

// checkWritable reports what writeAtomic would refuse for path, writing
// nothing: for commands that write several files and must write all or none.
func checkWritable(path string) error {
	_, _, err := writeTarget(path)
	return err
}

// writeAtomic writes a file (mode 0644, or the mode of the file it
// replaces) through a temporary file in the same folder and a rename, so
// nothing ever sees half a file; it replaces only a regular file (through
// a symbolic link, the file it names; a link to nothing is refused), never
// a folder or a device, and leaves no temporary file behind. Its errors do
// not name the path: the caller names the one the user typed.
func writeAtomic(path string, data []byte) error {
	path, mode, err := writeTarget(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kgrepl-*")
	if err != nil {
		return fmt.Errorf("cannot write in its folder: %v", bare(err))
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(mode); err != nil {
		return bare(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return bare(err)
	}
	if err := tmp.Close(); err != nil {
		return bare(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return bare(err)
	}
	done = true
	return nil
}

// readSessionFile reads at most maxSessionFile bytes of a regular file.
func readSessionFile(path string) ([]byte, error) {
	return readRegularFile(path, int64(maxSessionFile), "load", "session file")
}

// readRegularFile reads at most max bytes of a regular file, for cmd,
// which reads only files of that kind. It looks before it reads: a FIFO or
// a device is refused without being opened for reading in a way that
// could block, and the size is checked on the file actually opened.
func readRegularFile(path string, max int64, cmd, kind string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, bare(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("it is %s; %s reads only %ss", fileKind(st.Mode()), cmd, kind)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, bare(err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, bare(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("it is %s; %s reads only %ss", fileKind(st.Mode()), cmd, kind)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%d bytes, over the limit of a %s (%d bytes)", st.Size(), kind, max)
	}
	// Read into one buffer of the file's size (io.ReadAll's doubling held
	// up to twice the file while it read); a file that grew since its
	// size was read grows it.
	var buf bytes.Buffer
	buf.Grow(int(st.Size()) + bytes.MinRead) // ReadFrom grows the buffer when less is free
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, bare(err)
	}
	data := buf.Bytes()
	if int64(len(data)) > max {
		return nil, fmt.Errorf("over the limit of a %s (%d bytes)", kind, max)
	}
	return data, nil
}

// sessionLine is one input line of a session file.
type sessionLine struct {
	n     int // line number in the file
	words []string
	typed string    // a step's command as typed, from its comment
	ticks int       // a step's N, read by load before it replays anything
	file  *fileRead // what the command read from a file, from its block
}

// readsFile reports whether a command line reads a file: new
// --from-describe FILE and set --from FILE, which a session file follows
// with what they read. It returns the file's name.
func readsFile(words []string) (string, bool) {
	opt := ""
	switch {
	case len(words) > 1 && words[0] == "new":
		opt = "--from-describe"
	case len(words) > 1 && words[0] == "set" && strings.HasPrefix(words[1], "--"):
		opt = "--from"
	default:
		return "", false
	}
	for i, w := range words[1:] {
		if v, ok := strings.CutPrefix(w, opt+"="); ok {
			return v, true
		}
		if w == opt && i+2 < len(words) {
			return words[i+2], true
		}
	}
	return "", false
}

// fileBlock reads the block of what a command read, at all[i] (its head
// line): its text, and the index of the line after it.
func fileBlock(all []string, i int, name string) (*fileRead, int, error) {
	var n int
	if i >= len(all) || !strings.HasPrefix(all[i], fileBlockHead) {
		return nil, i, fmt.Errorf("the command reads %s, and the file does not hold what it read: a %q line should follow it, then that many lines starting %q (save writes them)",
			name, fileBlockHead+"N lines read from "+name, fileBlockLine)
	}
	if _, err := fmt.Sscanf(all[i], fileBlockHead+"%d lines", &n); err != nil || n < 0 {
		return nil, i, fmt.Errorf("%q does not say how many lines follow (want %q)", all[i], fileBlockHead+"N lines read from "+name)
	}
	if i+1+n > len(all) {
		return nil, i, fmt.Errorf("what it read (line %d) is %d lines, and the file ends before them", i+1, n)
	}
	var b strings.Builder
	for k := i + 1; k <= i+n; k++ {
		row, ok := strings.CutPrefix(all[k], fileBlockLine)
		if !ok || row != "" && !strings.HasPrefix(row, " ") {
			return nil, i, fmt.Errorf("what it read (line %d) is %d lines, and line %d is not one of them (each starts %q)", i+1, n, k+1, fileBlockLine+" ")
		}
		b.WriteString(strings.TrimPrefix(row, " ") + "\n")
	}
	return &fileRead{name: name, text: b.String()}, i + 1 + n, nil
}

func inputNames() string {
	var names []string
	for _, c := range commands {
		if c.mutates {
			names = append(names, c.name)
		}
	}
	return strings.Join(append([]string{"new"}, append(names, "step")...), ", ")
}

// parseSessionFile checks a session file and returns its lines: the
// header, the end line and its checksum (version 2), and that every line is
// a world input. Nothing runs here.
func parseSessionFile(text string) (lines []sessionLine, v1 bool, tick int, err error) {
	all := strings.Split(text, "\n")
	first := strings.TrimSpace(all[0])
	switch {
	case first == sessionHeaderV1:
		v1 = true
	case first == sessionHeader:
	case strings.HasPrefix(first, "# kgrepl session v"):
		return nil, false, 0, fmt.Errorf("%q is a session format this kgrepl does not read (it reads %q and v1)", first, sessionHeader)
	default:
		return nil, false, 0, fmt.Errorf("not a kgrepl session file (its first line should be %q)", sessionHeader)
	}
	// Every line is checked first, so a line that is not an input is named
	// even in a file whose end line is missing; then the end line.
	var endErr error
	if !v1 {
		body := strings.TrimSuffix(text, "\n")
		i := strings.LastIndexByte(body, '\n')
		var count int
		var sum string
		if _, err := fmt.Sscanf(body[i+1:], "# end: %d lines, tick %d, sha256 %s", &count, &tick, &sum); err != nil || i < 0 {
			endErr = fmt.Errorf("no end line: the file is truncated (a session file ends with \"# end: N lines, tick T, sha256 ...\")")
		} else {
			all = strings.Split(body[:i], "\n")
			got := sha256.Sum256([]byte(body[:i+1]))
			if hex.EncodeToString(got[:]) != sum {
				endErr = fmt.Errorf("the checksum in the end line (line %d) does not match: the file was changed or damaged after it was saved", len(all)+1)
			}
		}
		defer func() {
			switch {
			case err != nil:
			case endErr != nil:
				lines, err = nil, endErr
			case len(lines) != count:
				lines, err = nil, fmt.Errorf("the end line counts %d lines, the file holds %d", count, len(lines))
			}
		}()
	}
	sawNew := false
	for i := 0; i < len(all); i++ {
		raw := all[i]
		n := i + 1
		if strings.HasPrefix(raw, fileBlockHead) || strings.HasPrefix(raw, fileBlockLine) {
			return nil, v1, 0, fmt.Errorf("line %d: what a command read, with no command that reads a file before it", n)
		}
		words, comment, err := inputLine(raw, "a session file")
		if err != nil {
			return nil, v1, 0, fmt.Errorf("line %d: %v", n, err)
		}
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "new":
			if sawNew {
				return nil, v1, 0, fmt.Errorf("line %d: a second new (a session file has one, after its settings)", n)
			}
			sawNew = true
			if v1 {
				words = append(words, "--keep-settings") // v1's new kept the settings before it
			}
		case "step":
			if !sawNew {
				return nil, v1, 0, fmt.Errorf("line %d: step before the file's new line", n)
			}
			if len(words) != 2 {
				return nil, v1, 0, fmt.Errorf("line %d: want step N", n)
			}
		default:
			if !sawNew && words[0] != "set" {
				return nil, v1, 0, fmt.Errorf("line %d: %s before the file's new line (only set may come first)", n, words[0])
			}
		}
		l := sessionLine{n: n, words: words}
		if words[0] == "step" {
			l.typed = strings.TrimSpace(comment)
		}
		if name, ok := readsFile(words); ok {
			f, next, err := fileBlock(all, i+1, name)
			if err != nil {
				return nil, v1, 0, fmt.Errorf("line %d: %v", n, err)
			}
			l.file, i = f, next-1
		}
		lines = append(lines, l)
	}
	if !sawNew {
		return nil, v1, 0, fmt.Errorf("no new line: the file holds no world")
	}
	return lines, v1, tick, nil
}

// inputLine reads one line of a script that may hold world inputs only (a
// session file, the script an explore shard carries): its words, nil for a
// blank or comment line, and the comment. It refuses two inputs on one line
// and a word that is not a world input (new, step, or a command that
// changes the world); holder names the script in the error.
func inputLine(raw, holder string) (words []string, comment string, err error) {
	code, comment, _ := strings.Cut(raw, "#")
	if err := checkInputLine(code, holder); err != nil {
		return nil, "", err
	}
	words = strings.Fields(code)
	if len(words) == 0 {
		return nil, comment, nil
	}
	return words, comment, nil
}

// checkInputLine is inputLine's check of a line's code (the line before
// any '#'), allocating nothing: explore --merge checks every line of a
// script that may be hundreds of megabytes.
func checkInputLine(code, holder string) error {
	first := strings.TrimLeftFunc(code, unicode.IsSpace)
	if first == "" {
		return nil
	}
	if i := strings.IndexFunc(first, unicode.IsSpace); i >= 0 {
		first = first[:i]
	}
	if strings.Contains(code, ";") {
		return fmt.Errorf("one input a line (no ';' in %s)", holder)
	}
	if c := lookup(first); first != "new" && first != "step" && (c == nil || !c.mutates) {
		return fmt.Errorf("%.40q is not a world input; %s holds only %s lines", first, holder, inputNames())
	}
	return nil
}

// asSaved undoes what a text transport may do to a saved session file:
// a UTF-8 byte-order mark before it and CRLF line ends (save writes LF and
// no mark). It reports false when there is nothing to undo.
func asSaved(data []byte) (string, bool) {
	text := string(data)
	t := strings.TrimPrefix(text, "\ufeff")
	t = strings.ReplaceAll(t, "\r\n", "\n")
	return t, t != text
}

func cmdLoad(s *Session, args []string) (*Result, error) {
	if err := needArgs("load", args, 1, 1); err != nil {
		return nil, err
	}
	data, err := readSessionFile(s.path(args[0]))
	if err != nil {
		return nil, fmt.Errorf("load %s: %v", args[0], err)
	}
	lines, v1, tick, err := parseSessionFile(string(data))
	if as, ok := asSaved(data); ok && err != nil {
		// The saved file after a transport that only changed its line
		// ends or added a byte-order mark (git's core.autocrlf, an editor
		// on Windows) is still the saved file: its checksum, over the text
		// as save wrote it, tells whether anything else changed.
		lines, v1, tick, err = parseSessionFile(as)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %v", args[0], err)
	}
	// The ticks the file's steps add up to are bounded like a typed
	// session's (a world's life), counted before anything is replayed: a
	// file of many large steps, each within one step's limit, would
	// otherwise run far past it.
	// Only steps advance the clock, from tick 0 at the file's one new, so
	// this sum bounds every tick the replay reaches.
	steps := []int{}
	for i, l := range lines {
		if l.words[0] == "step" {
			n, perr := parseCount("step", "N", l.words[1], 1, limitStep.max)
			if perr != nil {
				return nil, fmt.Errorf("load %s: line %d: %w", args[0], l.n, perr)
			}
			lines[i].ticks = n
			steps = append(steps, n)
		}
	}
	if err := limitClock.checkSum("load "+args[0], fmt.Sprintf("the file's %d steps", len(steps)), steps...); err != nil {
		return nil, err
	}
	// Replay into a scratch session, so a damaged file leaves this one as it was.
	d := s.fresh()
	for _, l := range lines {
		if l.words[0] == "step" {
			typed := l.typed
			if typed == "" {
				typed = "step " + l.words[1]
			}
			if perr := d.stepExact(l.ticks, typed); perr != nil {
				return nil, fmt.Errorf("load %s: line %d: %w", args[0], l.n, perr)
			}
			continue
		}
		d.supply = l.file
		if _, err := d.run(l.words); err != nil {
			return nil, fmt.Errorf("load %s: line %d: %w", args[0], l.n, err)
		}
	}
	if !v1 && d.World().Tick != tick {
		return nil, fmt.Errorf("load %s: the inputs replay to tick %d, the end line says tick %d", args[0], d.World().Tick, tick)
	}
	b := d.cur
	b.name = s.cur.name
	s.branches[b.name] = b
	s.cur = b
	note := ""
	if v1 {
		note = " (a version 1 file: no checksum, so truncation cannot be detected; save writes version 2)"
	}
	return &Result{Text: fmt.Sprintf("loaded %s into branch %s: tick %d, group %s, %s%s", args[0], b.name, b.world.Tick, b.world.Group.State(), EpochText(b.world.Group), note)}, nil
}

// stepExact advances exactly n ticks, stop events or not, and records them
// as one step: how load replays a recorded step.
func (s *Session) stepExact(n int, typed string) error {
	w := s.cur.world
	at := w.Tick
	s.pendingCPs = nil
	for i := 1; i <= n; i++ {
		if s.stopRequested() {
			return ErrInterrupted
		}
		t0 := time.Now()
		w.Step()
		s.cur.cp.stepping += time.Since(t0)
		s.cur.cp.ticks++
		s.maybeCheckpoint(w, i)
		if s.AfterTick != nil {
			if err := s.AfterTick(w); err != nil {
				return err
			}
		}
	}
	s.cur.hist.inputs = append(s.cur.hist.inputs, input{at: at, step: true, ticks: n, typed: typed})
	s.cur.hist.cps = append(s.cur.hist.cps, s.pendingCPs...)
	s.pendingCPs = nil
	return nil
}
