package kernel

import (
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgrepl/kgrepl/sim"
)

// command is one entry of the command table. The same table drives
// parsing, help and completion, so they cannot drift apart.
type command struct {
	name    string
	usage   string
	summary string
	help    string
	// mutates marks the world inputs: commands that change the world and
	// are recorded, as typed, in the branch's history, which back, fork,
	// save, load and compare replay.
	mutates bool
	// time marks step and run: recorded as the ticks they advanced.
	time bool
	run  func(s *Session, args []string) (*Result, error)
	// values fills in the usage's placeholders for completion where the
	// defaults (placeholderValues) do not fit this command: join's Cn is
	// a client not yet running, switch's NAME a branch.
	values map[string]valuesFunc
	// gram is the usage parsed (grammar.go), for completion and typos.
	gram *grammar
}

// valuesFunc lists the words a placeholder may be: typed are the words
// after the command so far, partial the start of the one being typed.
type valuesFunc func(s *Session, typed []string, partial string) []string

var commands []*command

func init() {
	commands = []*command{
		{name: "new", usage: "new [--topics NAME:P,...] [--output NAME:P] [--members N | --from-describe FILE [--group G]] [--static] [--keep-settings|--kafka-defaults]",
			summary: "make a fresh world on this branch (the default world with no options), or one from a real group",
			help: "Every setting goes back to its default unless --keep-settings is given (then the settings,\n" +
				"per-client ones too, are those of the world before). --members 0 starts with an empty group\n" +
				"(generation 0). new replaces the current branch's world and history; other branches stay.\n" +
				"--static gives every member its own group.instance.id, its client id (set group.instance.id\n" +
				"per-member); a world never starts with two members holding one instance id or transactional.id.\n\n" +
				"--from-describe FILE starts the world as kafka-consumer-groups.sh --describe --group G --members\n" +
				"--verbose printed a real group (Kafka 2.3 to 4.x, classic or consumer; --state and the offsets\n" +
				"table may be in the file too): Stable, each member owning its current assignment, its topics\n" +
				"and partition counts from the partitions the file names (--topics NAME:P adds topics or raises\n" +
				"counts), the group's protocol, assignor and instance ids set from the file, sticky.rules kafka.\n" +
				"The members are named C1..Cn (in their consumer ids' order) and the mapping is printed; show\n" +
				"names prints it again and describe group --real-names shows the file's names. --group G chooses\n" +
				"a group of a file that describes several. The session keeps what it read: back, compare, save\n" +
				"and load never read the file again (docs/kafka-import.md).\n\n" +
				"--kafka-defaults starts in real time (time ms, tick.ms 5) with Kafka 4.0's client and broker\n" +
				"defaults in milliseconds (session.timeout.ms 45000, max.poll.interval.ms 300000, ...; show\n" +
				"config lists them) and processing.ms 5 a record. partition.assignment.strategy is Kafka's list,\n" +
				"range,cooperative-sticky: the group votes range and rebalances eagerly.",
			run: cmdNew},
		{name: "produce", usage: "produce TOPIC-P N | produce --rate RATE INPUT [INPUT ...] | produce --stop INPUT [INPUT ...]",
			summary: "append N upstream records to an input partition, or produce steadily as time passes",
			help:    produceRateHelp,
			mutates: true, run: cmdProduce, values: map[string]valuesFunc{"TOPIC-P": inputPartitionWords, "INPUT": inputWords,
				"RATE": func(*Session, []string, string) []string { return []string{"1/tick", "1/10ticks"} }}},
		{name: "set", usage: "set KEY VALUE | set Cn.KEY VALUE | set --from FILE [--client Cn] | set commit after|before|auto | set producer plain|idempotent|transactional",
			summary: "change a setting for every client, or for one; or take a client's .properties",
			help: "Keys are Kafka's config names; `show config` lists them with values and defaults.\n" +
				"group.instance.id per-member and transactional.id per-member give each member its own id from\n" +
				"its client id (C2, tx-C2), as a deployment gives each pod its own.\n\n" +
				"set --from FILE reads a Kafka client's .properties (as java.util.Properties does) and checks it\n" +
				"as Kafka 4.0's client does: a file the client would refuse is refused whole, naming each bad\n" +
				"key and Kafka's rule, and so is a file that sets no key Kafka's clients know (a describe output,\n" +
				"a log). Otherwise every key is listed: applied (what means in kgrepl what it means to Kafka),\n" +
				"not applied with why (each .ms key: this world counts ticks; isolation.level), or ignored (a\n" +
				"key kgrepl does not model, or one Kafka does not know). The file is every member's:\n" +
				"its group.instance.id and transactional.id become per-member; with --client Cn it is Cn's\n" +
				"alone, ids as written. The session keeps what it read (docs/kafka-import.md).",
			mutates: true, run: cmdSet},
		{name: "show", usage: "show config [KEY ...] | show names | show traffic", summary: "list every setting (or those named) with its value and default; an imported group's member names; or the steady production",
			run: cmdShow},
		{name: "join", usage: "join Cn [--static] [--topics a,b]", summary: "start member Cn and join the group",
			mutates: true, run: cmdJoin, values: map[string]valuesFunc{"Cn": func(s *Session, _ []string, _ string) []string { return nextClients(s) }}},
		{name: "close", usage: "close Cn [--now]", summary: "graceful shutdown: finish the batch, commit, close(), LeaveGroup",
			help: "close Cn is consumer.wakeup() from a shutdown hook: the batch in hand is finished and committed\n" +
				"as the commit mode says, then close() commits and sends LeaveGroup (none for a static member).\n" +
				"close Cn --now breaks out after the record in hand: under auto-commit close() commits the\n" +
				"positions poll() returned, so the rest of the batch is skipped (a real Kafka pitfall).",
			mutates: true, run: cmdClose},
		{name: "crash", usage: "crash Cn [now | after N]", summary: "kill a member at once, or after N more records (default after 2)",
			mutates: true, run: cmdCrash},
		{name: "restart", usage: "restart Cn [--graceful|--kill]", summary: "start a new instance of Cn (same group.instance.id and transactional.id): killed first, or closed (--graceful)",
			help: "restart Cn (or --kill) is a kill and a start: the old process stops at once, sending nothing (no\n" +
				"commit, no LeaveGroup), unless it is stuck in a slow record, which keeps running as a zombie;\n" +
				"the new process starts at the same tick. A static member under group.protocol=consumer is\n" +
				"then refused with UNRELEASED_INSTANCE_ID until the old one's session times out (Kafka 4.x).\n\n" +
				"restart Cn --graceful is a deploy's restart: close Cn (the batch in hand finished and\n" +
				"committed, then close(), which sends LeaveGroup for a dynamic classic member, none for a\n" +
				"static one, and under the consumer protocol a leave heartbeat with epoch -1, or -2 for a\n" +
				"static member), then, at the end of the tick the old process stopped in, the new one starts.\n" +
				"run until stable waits for it; run until closed Cn waits for the old process to stop.",
			mutates: true, run: cmdRestart},
		{name: "roll", usage: "roll MEMBERS [--every DURATION] [--graceful|--kill] [--wait-stable]",
			summary: "a rolling deploy: restart each member in turn (graceful unless --kill)",
			help: "MEMBERS is all (every running member, in natural order), Cn, Cn..Cm, or a comma-separated\n" +
				"list of them (C1..C3,C5), restarted in the order given, one at a time: the first at once,\n" +
				"each next one once the one before has its new process, and\n" +
				"  --every DURATION  at least DURATION after the one before began (a whole number of ticks)\n" +
				"  --wait-stable     once the group is stable again (as run until stable means it)\n" +
				"Each restart is restart Cn --graceful, or with --kill restart Cn (then give --every or\n" +
				"--wait-stable, or every member restarts in the same tick). The roll is done when every\n" +
				"member has its new process and the group is stable again; run until stable waits for it.\n" +
				"Its progress is in the narration (roll 2/3: C2 closes ...) and its cost in metrics: the\n" +
				"ticks it took, the rebalances and the pause meter while it ran. One roll at a time.",
			mutates: true, run: cmdRoll, values: map[string]valuesFunc{"MEMBERS": memberWords}},
		{name: "slow", usage: "slow Cn", summary: "make Cn's next record slow (slow.processing.ticks)",
			mutates: true, run: memberCmd("slow", (*sim.World).Slow)},
		{name: "drop", usage: "drop TYPE [request|response] [Cn] [N]",
			summary: "lose the next N packets of a type (to or from Cn)",
			help: "For a request Cn is the sender, for a response the receiver; without Cn any member's. TYPE is\n" +
				"a Kafka API name, e.g. `drop Produce response C2` loses the next produce answer to C2. The\n" +
				"direction (request by default), Cn and N are each given at most once, in any order.\n" +
				"RebalanceNotification is only a response (from the coordinator to a member), and\n" +
				"WriteTxnMarkers goes B1 to B1, so it takes no Cn.",
			mutates: true, run: cmdDrop},
		{name: "step", usage: "step [N|DURATION] [--quiet|--verbose]", summary: "advance N ticks (default 1); stops at stop events",
			help: "In real time (time ms) a DURATION with a unit (ms, s, m, h: 250ms, 30s, 1.5m, 1h30m) steps that\n" +
				"long, rounded up to whole ticks; a bare N is ticks in either clock.\n" +
				"--quiet summarises the per-record lines (poll() returned, processed, commits, committed\n" +
				"transactions) into one line per member; --verbose prints every event (the default outside demos).",
			time: true, run: cmdStep},
		{name: "run", usage: "run until stable | run until tick N | run until time T | run until closed|left Cn | run until polled|processed RECORD [by Cn] [--quiet|--verbose]",
			summary: "advance until the group is stable, to a tick or a time, a member closed or left, or a record polled or processed",
			help: "Every form halts at stop events (a crash taking effect, the start of a slow record).\n" +
				"`run until time 10m` (real time: time ms) runs to the first tick at or after that time from\n" +
				"the world's start (units ms, s, m, h).\n" +
				"`run until stable` also waits for what was asked and is not done: a member closing (the group\n" +
				"stays Stable while it finishes its batch), a restart --graceful, a roll.\n" +
				"`run until closed C2` waits until C2's process (the one running now) has stopped;\n" +
				"`run until left C2` until the coordinator no longer has the member it has for C2 now (a\n" +
				"static member that sent no LeaveGroup leaves at its session timeout, or when its new\n" +
				"instance takes its place). Both are refused while nothing is closing C2.\n" +
				"`run until polled p2.3` stops at the tick a poll() returns p2.3, before it is processed.\n" +
				"--quiet summarises the per-record lines into one line per member (t=12..20 C1 processed\n" +
				"o0.3..o0.5, p0.3..p0.5); --verbose prints every event (the default outside demos).",
			time: true, run: cmdRun},
		{name: "back", usage: "back [N]", summary: "travel back N ticks (default 1): exactly the state then", run: cmdBack},
		{name: "fork", usage: "fork NAME", summary: "copy the current branch and switch to the copy", run: cmdFork,
			help: "NAME is 1 to 64 letters, digits, '-', '_' or '.' (it is listed after plot --branches, so no ',').\n" +
				"The copy costs nothing until either branch changes: both share the world and its history."},
		{name: "switch", usage: "switch NAME", summary: "switch to another branch", run: cmdSwitch,
			values: map[string]valuesFunc{"NAME": func(s *Session, _ []string, _ string) []string { return s.branchNames() }}},
		{name: "branches", usage: "branches", summary: "list the branches", run: cmdBranches},
		{name: "describe", usage: "describe group [--members [--verbose] | --state] [--json] [--real-names]",
			summary: "the group as kafka-consumer-groups.sh --describe shows it", run: cmdDescribe,
			help: "describe group: each input partition's committed offset, log end, lag and owner.\n" +
				"--members: each member (--verbose adds its assignment). --state: the coordinator's view\n" +
				"(assignor, state, generation, member count).\n\n" +
				"A consumer group (group.protocol=consumer, KIP-848) is shown as Kafka 4.x shows one: --state\n" +
				"has GROUP-EPOCH and TARGET-ASSIGNMENT-EPOCH (kgrepl shows them without --verbose) and the\n" +
				"server-side assignor as ASSIGNMENT-STRATEGY; --members --verbose has CURRENT-EPOCH,\n" +
				"CURRENT-ASSIGNMENT (what the member owns and acknowledged), TARGET-EPOCH and TARGET-ASSIGNMENT\n" +
				"(where the coordinator wants it), and UPGRADED when classic and consumer members share the\n" +
				"group; GROUP-INSTANCE-ID appears when a member is static. While the group is Assigning or\n" +
				"Reconciling the owners stay visible: there is no stop-the-world. --json adds\n" +
				"\"protocol\":\"consumer\", \"group_epoch\", \"assignment_epoch\" and per member \"member_epoch\",\n" +
				"\"target\", \"member_state\", \"revoking\", \"upgraded\" (generation and leader are null).\n\n" +
				"--real-names, in a world new --from-describe made, shows each member's CLIENT-ID and HOST as the\n" +
				"file gives them (orders-app-7, /10.0.7.21) in place of kgrepl's (C3, /C3); --json keeps client_id\n" +
				"C3 and adds real_client_id and real_host. A member that joined since has kgrepl's names only.",
		},
		{name: "offsets", usage: "offsets [--from TICK] [--last N]", summary: "the records of __consumer_offsets", run: cmdOffsets,
			help: "--from TICK lists the records written at that tick or later, --last N the last N (of those)."},
		{name: "log", usage: "log TOPIC-P [--from OFFSET | --around OFFSET]", summary: "a partition's cells, markers, HW and LSO", run: cmdLog,
			help: "--from OFFSET shows the rows from that offset to the end; --around OFFSET the rows within\n" +
				fmt.Sprintf("%d of it. The header still gives the whole log's HW, LSO and committed offset, and the\n", aroundRows) +
				"aborted transaction index the transactions that reach the rows shown.",
		},
		{name: "txn", usage: "txn [ID]", summary: "transaction coordinator state, as kafka-transactions.sh describe", run: cmdTxn},
		{name: "consume", usage: "consume TOPIC [--isolation read_committed|read_uncommitted] [--from OFFSET] [--last N] [--json]",
			summary: "the audit reader: read a topic from offset 0", run: cmdConsume,
			help: "--from OFFSET lists each partition's records from that offset on, --last N the last N listed\n" +
				"(duplicates are still numbered as the reader meets them from offset 0)."},
		{name: "trace", usage: "trace [N] [--type T,...] [--member Cn] [--from TICK] [--events] [--json]",
			summary: "the packets so far (the last N, of some types, to or from a member); --events adds the events (a key of its own with --json)", run: cmdTrace,
			help: "--from TICK lists the packets sent (and with --events the events) at that tick or later."},
		{name: "metrics", usage: "metrics [--from TICK] [--last N] [--json]", summary: "rebalances, pause meter, unavailability by cause, most lag, health, duplicates, lost", run: cmdMetrics,
			help: "A rebalance of a classic group is one round (the group enters PreparingRebalance) and ends in\n" +
				"a new generation. A consumer group (group.protocol=consumer, KIP-848) has no generation: a\n" +
				"rebalance is a bump of the group epoch (a member joins, leaves or is fenced, or changes its\n" +
				"subscription), as Kafka's coordinator counts them; its pauses are grouped by group epoch, and\n" +
				"`generation` in metrics --json is the group epoch (with \"protocol\":\"consumer\" and\n" +
				"\"group_epoch\" beside it). The pause meter counts, each tick, the partitions a member should\n" +
				"be consuming but is not while a rebalance is under way, under either protocol. --from TICK lists\n" +
				"the rebalances (and --json's pauses) begun at that tick or later, --last N the last N.\n\n" +
				"unavailable counts every partition-tick a subscribed input partition could not be consumed\n" +
				"(subscribed: by a member of the group, or by a client's newest process, running or not), once,\n" +
				"under the first cause that applies: rebalance (the pause meter counts it: so the total is at\n" +
				"least the meter and rebalance equals it); then, if a member holds the partition, stopped when\n" +
				"that member stopped with a fatal error (UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, a fenced\n" +
				"producer), else owner down (crashed, closed, restarting, a static member away, out after a poll\n" +
				"timeout); if no member holds it, unassigned while a running process subscribes to its topic,\n" +
				"else stopped or owner down as its subscribers are. The total is the sum of the causes. A static\n" +
				"member's restart is no rebalance (pause meter 0) but its partitions wait: owner down.\n" +
				"most lag is the most records a partition fell behind (log end - committed offset), sampled at\n" +
				"tick 0 and after every tick, and when it was first reached; in real time, most lag (time) is the\n" +
				"most time one fell behind: at each tick, the age of each partition's oldest record not committed\n" +
				"(the record at its committed offset; the backlog was appended at tick 0), the most over the\n" +
				"ticks, where and when first. health is the group now: members\n" +
				"running, members stopped by a fatal error and which, partitions no member holds and partitions\n" +
				"held by a member that is down; ok when none of these is wrong, dead when no member runs. In real\n" +
				"time (time ms) the pause meter and unavailable read in partition x seconds, the ticks beside."},
		{name: "members", usage: "members", summary: "every member process: state, loop, batch in hand", run: cmdMembers},
		{name: "demo", usage: "demo [N [--verbose] [--step]]", summary: "run demo N (1..16) in a fresh session; demo alone lists them",
			help: "A demo starts a fresh session: every branch of this one is dropped (main too) and every\n" +
				"setting is back at its default, so a demo prints the same wherever and however often it runs.\n" +
				"To keep a branch, save FILE before the demo and load FILE after it. A demo that fails leaves\n" +
				"this session as it was.\n\n" +
				"A demo prints its narration, the protocol's events, errors and the views it asks for, with the\n" +
				"per-record lines summarised (t=12..20 C1 processed o0.3..o0.5); --verbose prints every line.\n" +
				"--step, in the REPL, pauses at each act and narration block: Enter goes on, q stops the demo\n" +
				"there (the session stays at that tick).",
			run: cmdDemo, values: map[string]valuesFunc{"N": func(*Session, []string, string) []string {
				var out []string
				for i := 1; i <= len(demoTitles); i++ {
					out = append(out, strconv.Itoa(i))
				}
				return out
			}}},
		{name: "save", usage: "save FILE", summary: "save the current branch as a replayable session file", run: cmdSave},
		{name: "load", usage: "load FILE", summary: "load a session file into the current branch", run: cmdLoad},
		{name: "help", usage: "help [CMD]", summary: "list the commands, or explain one (CMD --help does too)", run: cmdHelp},
		{name: "exit", usage: "exit", summary: "leave kgrepl", run: func(s *Session, args []string) (*Result, error) {
			if err := needArgs("exit", args, 0, 0); err != nil {
				return nil, err
			}
			s.done = true
			return nil, nil
		}},
	}
	addPictureCommands()
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// resolve finds the command a typed word names: its name, or a start of
// exactly one command's name (desc for describe). A start shared by
// several is refused naming them; a word that starts none gets the nearest
// commands by edit distance (unknownCommand). rest is the rest of the
// line, which tells which commands the word could be.
func resolve(word string, rest []string, prefix string) (*command, error) {
	if c := lookup(word); c != nil {
		return c, nil
	}
	var starts []string
	for _, name := range commandNames() {
		if word != "" && strings.HasPrefix(name, word) {
			starts = append(starts, name)
		}
	}
	switch len(starts) {
	case 0:
		return nil, unknownCommand(word, rest, prefix)
	case 1:
		return lookup(starts[0]), nil
	}
	sort.Strings(starts)
	return nil, fmt.Errorf("%s%s: which command? %s start with %q (type more of the name)", prefix, word, strings.Join(starts, ", "), word)
}

// unknownCommand is the error for a word that is no command and starts
// none: the closest commands when the word looks like a typo of some (jion
// -> join, dsecribe -> describe), the whole list otherwise. A typo changes
// at most two letters, of the name or of a start of it (a start runs the
// command too); among the commands that close, those whose usage takes the
// rest of the line come first (sow config is show, not slow). Only
// words of about a command's length are compared, so a long word costs
// nothing, and the error quotes at most the start of it.
func unknownCommand(word string, rest []string, prefix string) error {
	type near struct {
		name     string
		d, whole int // to the name or a start of it; to the whole name
		fits     bool
	}
	var close []near
	lw := strings.ToLower(word)
	for _, c := range commands {
		if len(word) > len(c.name)+2*utf8.UTFMax {
			continue // more than two letters longer: never within two edits
		}
		whole := editDistance(lw, c.name)
		d := whole
		// A start of the name, typed with a slip: dscr for descr(ibe).
		if n := utf8.RuneCountInString(lw); n >= 3 {
			for k := n - 1; k <= n+1 && k < len(c.name); k++ {
				d = min(d, editDistance(lw, c.name[:k]))
			}
		}
		// A typo changes at most two letters, and fewer than the word has.
		if d > 2 || d >= len(word) {
			continue
		}
		close = append(close, near{c.name, d, whole, c.grammar().accepts(rest)})
	}
	anyFits := false
	for _, n := range close {
		anyFits = anyFits || n.fits
	}
	// The nearest; between equals, a slip in the whole name is likelier
	// than one in a start of it (sow is show, not sw(itch)).
	best, bestWhole, names := 3, 0, []string(nil)
	for _, n := range close {
		if anyFits && !n.fits {
			continue
		}
		if n.d < best || n.d == best && n.whole < bestWhole {
			best, bestWhole, names = n.d, n.whole, nil
		}
		if n.d == best && n.whole == bestWhole {
			names = append(names, n.name)
		}
	}
	if len(names) > 0 {
		return fmt.Errorf("%s%s: unknown command; did you mean %s? (help lists every command)", prefix, word, strings.Join(names, " or "))
	}
	return fmt.Errorf("%s%s: unknown command (commands: %s; help CMD explains one)", prefix, shortWord(word), strings.Join(commandNames(), " "))
}

// maxQuoted is how much of a word an error message repeats.
const maxQuoted = 40

// shortWord is word for an error message: a long one cut after maxQuoted
// bytes (at a letter's boundary), saying how long it was.
func shortWord(word string) string {
	if len(word) <= maxQuoted {
		return word
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(word[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (a word of %s bytes)", word[:cut], group(len(word)))
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of two neighbouring letters that turn a into b (the optimal string
// alignment distance: jion -> join is one swap).
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

func commandNames() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	return out
}

func usageErr(c string, format string, args ...any) error {
	cmd := lookup(c)
	msg := fmt.Sprintf(format, args...)
	if cmd != nil {
		msg += " (usage: " + cmd.usage + ")"
	}
	return fmt.Errorf("%s: %s", c, msg)
}

// flags splits args into positional words and --flags with their values.
// valued names the flags that take a value.
func flags(cmd string, args []string, valued, bare []string) (pos []string, fl map[string]string, err error) {
	fl = map[string]string{}
	isIn := func(x string, set []string) bool {
		for _, s := range set {
			if s == x {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if _, twice := fl[name]; twice {
			// Not "the last one wins": one of the two was a mistake.
			return nil, nil, usageErr(cmd, "%s is given twice (give each option once)", name)
		}
		switch {
		case isIn(name, valued):
			if !hasVal {
				// A missing value before the next option is not that option.
				if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
					return nil, nil, usageErr(cmd, "%s needs a value", name)
				}
				i++
				val = args[i]
			}
			fl[name] = val
		case isIn(name, bare):
			if hasVal { // --json=false is not "no --json"
				return nil, nil, usageErr(cmd, "%s takes no value (got %s)", name, a)
			}
			fl[name] = "true"
		default:
			allowed := append(append([]string{}, valued...), bare...)
			if len(allowed) == 0 {
				return nil, nil, usageErr(cmd, "unknown option %s (it takes none)", name)
			}
			return nil, nil, usageErr(cmd, "unknown option %s (options: %s)", name, strings.Join(allowed, " "))
		}
	}
	return pos, fl, nil
}

func needArgs(cmd string, pos []string, min, max int) error {
	if len(pos) < min {
		return usageErr(cmd, "missing argument")
	}
	if len(pos) > max {
		return usageErr(cmd, "unexpected %q", pos[max])
	}
	return nil
}

// parseAtLeast reads a whole number >= min with no upper end of its own: a
// limit (limits.go) checks it next, naming its bound. A number too large for
// an int is refused here by lim, with the digits as the user typed them.
func parseAtLeast(cmd, what, s string, min int, lim limit) (int, error) {
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") {
		if v, ok := new(big.Int).SetString(s, 10); ok {
			if strings.HasPrefix(what, "--") { // as the option's own check says it
				cmd += " " + what
			}
			return 0, lim.refuse(cmd, "", v)
		}
	}
	if err != nil || n < min {
		return 0, usageErr(cmd, "%s %q is not a whole number >= %d", what, s, min)
	}
	return n, nil
}

func parseCount(cmd, what, s string, min, max int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, usageErr(cmd, "%s %q is not a whole number from %d to %d", what, s, min, max)
	}
	return n, nil
}

func (s *Session) path(file string) string {
	if s.Dir == "" || filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(s.Dir, file)
}

func cmdHelp(s *Session, args []string) (*Result, error) {
	if len(args) == 0 {
		var b strings.Builder
		b.WriteString("commands:\n")
		for _, c := range commands {
			fmt.Fprintf(&b, "  %s\n      %s\n", c.usage, c.summary)
		}
		b.WriteString("\nhelp CMD explains one command; ';' separates commands on a line, '#' starts a comment.")
		b.WriteString("\nLimit: " + limitLine.helpLine() + " (a script's line, -c's string, a notebook cell's line).")
		return &Result{Text: b.String()}, nil
	}
	if err := needArgs("help", args, 0, 1); err != nil {
		return nil, err
	}
	c, err := resolve(args[0], nil, "help ")
	if err != nil {
		return nil, err
	}
	text := c.usage + "\n  " + c.summary
	if c.help != "" {
		text += "\n\n" + c.help
	}
	if ls := commandLimits[c.name]; len(ls) > 0 {
		text += "\n\n" + limitsHelp(ls...)
	}
	if c.name == "set" {
		t := &Table{Header: []string{"KEY", "ALLOWED", "WHAT IT DOES"}}
		cfg := &s.World().Cfg
		for _, st := range sim.Settings {
			t.Add(st.Name(cfg), st.AllowedIn(cfg), st.DocIn(cfg))
		}
		text += "\n\n" + t.Text()
	}
	if c.name == "demo" {
		text += "\n\n" + demoList()
	}
	return &Result{Text: text}, nil
}
