package kernel

import (
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kgrepl/kgrepl/kernel/explore"
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
		{name: "show", usage: "show config | show names | show traffic", summary: "list every setting with its value and default; an imported group's member names; or the steady production",
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

// newOptions are new's options read.
type newOptions struct {
	topo   sim.Topology
	keep   bool
	static bool
	// An import: --from-describe FILE, --group G; --topics and --output as
	// given (they add to the file's topics).
	from, group string
	topics      []sim.TopicSpec
	output      *sim.TopicSpec
}

// parseNew reads new's options.
func parseNew(args []string) (newOptions, error) {
	// --defaults was the old spelling of what plain new now does; it is
	// still accepted, and changes nothing.
	pos, fl, err := flags("new", args, []string{"--topics", "--output", "--members", "--from-describe", "--group"},
		[]string{"--keep-settings", "--defaults", "--static", "--kafka-defaults"})
	opt := newOptions{topo: sim.DefaultTopology()}
	if err != nil {
		return opt, err
	}
	if fl["--keep-settings"] == "true" && fl["--kafka-defaults"] == "true" {
		return opt, usageErr("new", "--keep-settings and --kafka-defaults contradict each other (give one)")
	}
	if err := needArgs("new", pos, 0, 0); err != nil {
		return opt, err
	}
	from, importing := fl["--from-describe"]
	if _, ok := fl["--members"]; ok && importing {
		return opt, usageErr("new", "--members and --from-describe contradict each other (the file gives the members)")
	}
	if _, ok := fl["--group"]; ok && !importing {
		return opt, usageErr("new", "--group chooses a group of a describe file: it goes with --from-describe FILE")
	}
	if importing && from == "" {
		return opt, usageErr("new", "--from-describe needs a file name")
	}
	opt.from, opt.group = from, fl["--group"]
	if v, ok := fl["--topics"]; ok {
		opt.topo.Inputs = nil
		for _, spec := range strings.Split(v, ",") {
			t, err := parseTopicSpec("--topics", spec)
			if err != nil {
				return opt, err
			}
			opt.topo.Inputs = append(opt.topo.Inputs, t)
		}
		opt.topics = opt.topo.Inputs
	}
	if v, ok := fl["--output"]; ok {
		t, err := parseTopicSpec("--output", v)
		if err != nil {
			return opt, err
		}
		opt.topo.Output, opt.output = t, &t
	}
	if v, ok := fl["--members"]; ok {
		n, err := parseAtLeast("new", "--members", v, 0, limitMembers)
		if err != nil {
			return opt, err
		}
		opt.topo.Members = n
	}
	if fl["--keep-settings"] == "true" && fl["--defaults"] == "true" {
		return opt, usageErr("new", "--keep-settings and --defaults contradict each other")
	}
	opt.keep, opt.static = fl["--keep-settings"] == "true", fl["--static"] == "true"
	return opt, nil
}

func parseTopicSpec(flag, spec string) (sim.TopicSpec, error) {
	name, p, ok := strings.Cut(spec, ":")
	if !ok || name == "" {
		return sim.TopicSpec{}, usageErr("new", "%s %q: want NAME:PARTITIONS, e.g. orders:3", flag, spec)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 {
		return sim.TopicSpec{}, usageErr("new", "%s %q: the partition count %q is not a whole number >= 1", flag, spec, p)
	}
	return sim.TopicSpec{Name: name, Partitions: n}, nil
}

func cmdNew(s *Session, args []string) (*Result, error) {
	opt, err := parseNew(args)
	if err != nil {
		return nil, err
	}
	cfg := sim.DefaultConfig()
	kafka := indexOf(args, "--kafka-defaults") < len(args)
	switch {
	case opt.keep:
		cfg = s.cur.world.Cfg.Clone()
	case kafka:
		cfg = sim.KafkaDefaultConfig()
	}
	if opt.static {
		// Every member its own group.instance.id, from its client id, as
		// a deployment gives each pod its name (a member an import gives
		// an id keeps the file's).
		if err := cfg.Set("", "group.instance.id", sim.PerMember); err != nil {
			return nil, fmt.Errorf("new --static: %v", err)
		}
	}
	// The line the origin keeps: the shape of the world; the settings
	// (--keep-settings, --static, --kafka-defaults) are in the origin's own copy of them.
	line := strings.Join(append([]string{"new"}, filterOut(filterOut(filterOut(filterOut(args, "--defaults"), "--keep-settings"), "--static"), "--kafka-defaults")...), " ")
	if opt.from != "" {
		return newImported(s, opt, cfg, line)
	}
	topo := opt.topo
	if err := checkTopology("new", topo, cfg.RecordsPerPartition); err != nil {
		return nil, err
	}
	w, err := sim.New(topo, cfg)
	if err != nil {
		return nil, fmt.Errorf("new: %v", err)
	}
	// The origin holds its own copy of the settings: the world's change
	// as it runs, the origin's never.
	s.cur.hist = history{origin: &origin{newLine: line, topo: topo, cfg: cfg.Clone()}}
	s.cur.cp = cpClock{}
	s.cur.world, s.cur.frozen = w, false
	var ins []string
	for _, t := range topo.Inputs {
		ins = append(ins, fmt.Sprintf("%s (%d)", t.Name, t.Partitions))
	}
	s.say("new world: group %s, input %s, output %s (%d), %d member(s), %d records per partition",
		topo.Group, strings.Join(ins, ", "), topo.Output.Name, topo.Output.Partitions, topo.Members, w.Cfg.RecordsPerPartition)
	if kafka {
		s.say("real time: time ms, a tick is %d ms; Kafka 4.0's defaults (session.timeout.ms %d, max.poll.interval.ms %d, max.poll.records %d, ...: show config)",
			w.Cfg.TickMS, w.Cfg.Client.SessionTimeout, w.Cfg.Client.MaxPollInterval, w.Cfg.Client.MaxPollRecords)
	}
	return nil, nil
}

// newImported is new --from-describe FILE: the world starts as the file
// shows the group (owngroup.go).
func newImported(s *Session, opt newOptions, cfg sim.Config, line string) (*Result, error) {
	imp := importOptions{file: opt.from, group: opt.group, topics: opt.topics, output: opt.output, keep: opt.keep,
		rawCmd: "new --from-describe " + opt.from}
	p, f, err := importWorld(s, imp, &cfg)
	if err != nil {
		return nil, err
	}
	if err := checkTopology(imp.rawCmd, p.topo, cfg.RecordsPerPartition); err != nil {
		return nil, err
	}
	w, err := sim.NewStarted(p.topo, cfg, p.start)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", imp.rawCmd, err)
	}
	s.cur.hist = history{origin: &origin{newLine: line, topo: p.topo, cfg: cfg.Clone(), file: f, start: p.start, names: p.names}}
	s.cur.cp = cpClock{}
	s.cur.world, s.cur.frozen = w, false
	s.say("%s", importReport(p, w, imp))
	return nil, nil
}

func filterOut(args []string, drop string) []string {
	var out []string
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}

func cmdProduce(s *Session, args []string) (*Result, error) {
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			return cmdProduceSteady(s, args)
		}
	}
	if err := needArgs("produce", args, 2, 2); err != nil {
		return nil, err
	}
	w := s.World()
	tp, err := w.Layout().ParsePartition(args[0])
	if err != nil {
		return nil, fmt.Errorf("produce: %v", err)
	}
	n, err := parseAtLeast("produce", "N", args[1], 1, limitPartitionRecords)
	if err != nil {
		return nil, err
	}
	hw := w.Log(tp).HW()
	if err := limitPartitionRecords.checkSum("produce", fmt.Sprintf("%s holds %d + %d", tp, hw, n), hw, n); err != nil {
		return nil, err
	}
	shape := shapeOf(w)
	shape.records += n // both at most 2^31-1 a partition, times at most 2^40 partitions: no overflow
	if err := checkCost("produce", shape, fmt.Sprintf("%s (%s more records)", describeShape(shape), group(n))); err != nil {
		return nil, err
	}
	from := w.Events.Len()
	if err := w.ProduceInput(tp, n); err != nil {
		return nil, err
	}
	s.narrate(w.Events.Slice(from, w.Events.Len()))
	return nil, nil
}

func cmdSet(s *Session, args []string) (*Result, error) {
	if len(args) > 0 && strings.HasPrefix(args[0], "--") {
		return cmdSetFrom(s, args)
	}
	if len(args) == 1 {
		return nil, usageErr("set", "%s: missing VALUE", args[0])
	}
	if len(args) > 2 && strings.HasSuffix(args[1], ",") {
		// Kafka's list configs allow spaces around the commas; a command
		// line splits there.
		return nil, usageErr("set", "%s: a list is written without spaces: %s", args[0], strings.Join(args[1:], ""))
	}
	if err := needArgs("set", args, 2, 2); err != nil {
		return nil, err
	}
	w := s.World()
	key, val := args[0], args[1]
	switch key {
	case "commit":
		if val != "after" && val != "before" && val != "auto" {
			return nil, usageErr("set", "commit %q is not after, before or auto", val)
		}
		return nil, w.Set("", "commit.mode", val)
	case "producer":
		return nil, w.SetProducer(val)
	}
	if key == "records.per.partition" {
		// It takes effect at the next `new`, whose shape may differ from
		// this world's (`new --topics a:1 --keep-settings`): here it is
		// bounded as one partition's records, in the smallest world it
		// could make (one input partition, the output, no member), and
		// `new` checks it against the shape it is given. (Checked against
		// this world's shape, a saved branch's settings, which load and
		// compare set again in the default world before its `new`, were
		// refused there.)
		if n, err := strconv.Atoi(val); err == nil && n >= 0 {
			if err := limitPartitionRecords.checkf("set records.per.partition", n, ""); err != nil {
				return nil, err
			}
			smallest := worldShape{partitions: 2, records: n}
			if err := checkCost("set records.per.partition", smallest, fmt.Sprintf("%d records in one input partition", n)); err != nil {
				return nil, err
			}
		} else if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(val, "-") {
			_, err := parseAtLeast("set records.per.partition", "VALUE", val, 0, limitPartitionRecords)
			return nil, err
		}
	}
	client := ""
	if c, k, ok := strings.Cut(key, "."); ok && strings.HasPrefix(c, "C") && len(c) > 1 && c[1] >= '0' && c[1] <= '9' {
		client, key = c, k
	}
	// Every member's config is its overrides applied in order, at each
	// start and each set: their number is bounded (a key set again for a
	// client replaces its earlier override, so only clients x keys count,
	// and the repeats of enable.auto.commit and transactional.id). A set
	// past the bound is refused before the world is touched: a set adds at
	// most one override, so at the bound it is tried on a copy of the
	// settings first (sim.Config.Set keeps the rule of what replaces what).
	if n := len(w.Cfg.Overrides); client != "" && n >= limitOverrides.max {
		trial := w.Cfg.Clone()
		if err := trial.Set(client, key, val); err == nil && len(trial.Overrides) > limitOverrides.max {
			n := len(trial.Overrides)
			return nil, limitOverrides.checkf("set "+client+"."+key, n, fmt.Sprintf("%d per-client settings", n))
		}
	}
	if err := w.Set(client, key, val); err != nil {
		return nil, fmt.Errorf("set: %v", err)
	}
	return nil, nil
}

func cmdShow(s *Session, args []string) (*Result, error) {
	if len(args) == 1 && args[0] == "names" {
		return cmdShowNames(s)
	}
	if len(args) == 1 && args[0] == "traffic" {
		return cmdShowTraffic(s)
	}
	if len(args) != 1 || args[0] != "config" {
		return nil, usageErr("show", "show what? (config, names or traffic)")
	}
	// The first column marks a value that differs from its default.
	t := &Table{Header: []string{"", "KEY", "VALUE", "DEFAULT", "SCOPE"}}
	changed := 0
	for _, r := range s.World().Cfg.Rows() {
		mark := ""
		if r.Value != r.Default {
			mark = "*"
			changed++
		}
		t.Add(mark, r.Key, r.Value, r.Default, r.Scope)
	}
	note := "* differs from the default: none"
	if changed > 0 {
		note = fmt.Sprintf("* differs from the default (%d setting(s))", changed)
	}
	if s.World().Cfg.Time == sim.TimeMS {
		// In real time the defaults are Kafka's (new --kafka-defaults).
		note = strings.Replace(note, "the default", "the default (Kafka 4.0's, in real time)", 1)
	}
	return &Result{Text: t.Text() + note, Table: t, HTML: t.HTML()}, nil
}

func cmdJoin(s *Session, args []string) (*Result, error) {
	pos, fl, err := flags("join", args, []string{"--topics"}, []string{"--static"})
	if err != nil {
		return nil, err
	}
	if err := needArgs("join", pos, 1, 1); err != nil {
		return nil, err
	}
	var topics []string
	if v, ok := fl["--topics"]; ok {
		topics = strings.Split(v, ",")
	}
	w := s.World()
	if w.Member(pos[0]) == nil {
		if err := limitMembers.checkSum("join "+pos[0], fmt.Sprintf("%d clients + %s", len(w.Clients()), pos[0]), len(w.Clients()), 1); err != nil {
			return nil, err
		}
		shape := shapeOf(w)
		shape.members++
		if err := checkCost("join "+pos[0], shape, describeShape(shape)); err != nil {
			return nil, err
		}
	}
	from := w.Events.Len()
	if err := w.Join(pos[0], fl["--static"] == "true", topics); err != nil {
		return nil, err
	}
	s.narrate(w.Events.Slice(from, w.Events.Len()))
	return nil, nil
}

func memberCmd(name string, f func(*sim.World, string) error) func(*Session, []string) (*Result, error) {
	return func(s *Session, args []string) (*Result, error) {
		w := s.World()
		if len(args) != 1 {
			return nil, usageErr(name, "want exactly one member (running: %s)", strings.Join(liveClients(s), " "))
		}
		from := w.Events.Len()
		if err := f(w, args[0]); err != nil {
			return nil, err
		}
		s.narrate(w.Events.Slice(from, w.Events.Len()))
		return nil, nil
	}
}

func cmdClose(s *Session, args []string) (*Result, error) {
	switch {
	case len(args) == 1:
		return memberCmd("close", (*sim.World).Close)(s, args)
	case len(args) == 2 && args[1] == "--now":
		return memberCmd("close", (*sim.World).CloseNow)(s, args[:1])
	}
	return nil, usageErr("close", "want `close Cn` or `close Cn --now` (running: %s)", strings.Join(liveClients(s), " "))
}

func cmdCrash(s *Session, args []string) (*Result, error) {
	if err := needArgs("crash", args, 1, 3); err != nil {
		return nil, err
	}
	w := s.World()
	from := w.Events.Len()
	var err error
	switch {
	case len(args) == 1:
		err = w.CrashAfter(args[0], 2)
	case args[1] == "now" && len(args) == 2:
		err = w.CrashNow(args[0])
	case args[1] == "after" && len(args) == 3:
		n, perr := strconv.Atoi(args[2])
		if perr != nil {
			return nil, usageErr("crash", "after %q: N is a number of records", args[2])
		}
		err = w.CrashAfter(args[0], n)
	default:
		return nil, usageErr("crash", "%q: want now, or after N", strings.Join(args[1:], " "))
	}
	if err != nil {
		return nil, err
	}
	s.narrate(w.Events.Slice(from, w.Events.Len()))
	if len(args) == 1 || args[1] == "after" {
		n := "2"
		if len(args) == 3 {
			n = args[2]
		}
		s.say("%s will crash once it has finished %s more record(s)", args[0], n)
	}
	return nil, nil
}

func cmdDrop(s *Session, args []string) (*Result, error) {
	// No upper bound: past the type, a fifth word is one of a kind given
	// before, and parseDropRule says which.
	if err := needArgs("drop", args, 1, len(args)); err != nil {
		return nil, err
	}
	var api sim.API
	var names []string
	for _, a := range sim.APIs {
		names = append(names, string(a))
		if strings.EqualFold(string(a), args[0]) {
			api = a
		}
	}
	if api == "" {
		return nil, usageErr("drop", "no message type %q (types: %s)", args[0], strings.Join(names, " "))
	}
	r, err := parseDropRule(s, api, args[1:])
	if err != nil {
		return nil, err
	}
	// Every packet sent is checked against each rule pending.
	if n := len(s.World().PendingDrops()); n >= limitDropRules.max {
		return nil, limitDropRules.checkSum("drop", fmt.Sprintf("%d rules pending + 1", n), n, 1)
	}
	s.World().Drop(r)
	kind, who := "request", ""
	if r.Response {
		kind = "response"
		if r.To != "" {
			who = " to " + r.To
		}
	} else if r.From != "" {
		who = " from " + r.From
	}
	s.say("the next %d %s %s(s)%s will be lost", r.Count, api, kind, who)
	return nil, nil
}

// parseDropRule reads what follows drop's TYPE: a direction, a member and a
// count, in any order, each at most once (two of a kind contradict each
// other, or say one thing twice: either way a typo, and a session file
// should not keep it). A combination the model can never match is refused
// too, or the rule would wait for ever, silently: RebalanceNotification is
// only sent by the coordinator, to a member (a heartbeat's answer drawn as
// its own packet), and WriteTxnMarkers goes from the transaction coordinator
// to the partition leaders, B1 to B1, never to or from a member.
func parseDropRule(s *Session, api sim.API, args []string) (sim.DropRule, error) {
	r := sim.DropRule{Type: api, Count: 1}
	var dir, member, count string
	for _, a := range args {
		switch {
		case a == "request" || a == "response":
			switch {
			case dir == a:
				return r, usageErr("drop", "%s is given twice (give the direction once)", a)
			case dir != "":
				return r, usageErr("drop", "%s and %s contradict each other (give one direction: request or response)", dir, a)
			}
			dir = a
			r.Response = a == "response"
		case strings.HasPrefix(a, "C"):
			switch {
			case member == a:
				return r, usageErr("drop", "%s is given twice (give the member once)", a)
			case member != "":
				return r, usageErr("drop", "%s and %s contradict each other (give one member, or none to match any)", member, a)
			}
			if s.World().Member(a) == nil {
				return r, fmt.Errorf("drop: no member %s (members: %s)", a, strings.Join(liveClients(s), " "))
			}
			member = a
		default:
			n, err := parseCount("drop", "N", a, 1, 1000)
			if err != nil {
				return r, err
			}
			if count != "" {
				return r, usageErr("drop", "N is given twice (%s and %s; give one count)", count, a)
			}
			count = a
			r.Count = n
		}
	}
	switch {
	case api == sim.RebalanceNotification && dir != "response":
		return r, usageErr("drop", "a RebalanceNotification is never a request: the coordinator sends it to a member, "+
			"as the answer to a heartbeat (say drop RebalanceNotification response [Cn] [N])")
	case api == sim.WriteTxnMarkers && member != "":
		return r, usageErr("drop", "WriteTxnMarkers never goes to or from %s: the transaction coordinator sends the markers "+
			"to the partition leaders, %s to %s (give no member)", member, sim.Broker, sim.Broker)
	}
	// For a request the member is the sender, for a response the receiver.
	if r.Response {
		r.To = member
	} else {
		r.From = member
	}
	return r, nil
}

// outputLevel takes --quiet or --verbose out of a step or run line and
// sets the level of the command; one of them, once.
func (s *Session) outputLevel(cmd string, args []string) ([]string, error) {
	var rest []string
	given := ""
	for _, a := range args {
		switch a {
		case "--quiet", "--verbose":
			switch {
			case given == a:
				return nil, usageErr(cmd, "%s is given twice (give each option once)", a)
			case given != "":
				return nil, usageErr(cmd, "%s and %s contradict each other (give one)", given, a)
			}
			given = a
			s.quietNow = a == "--quiet"
		default:
			rest = append(rest, a)
		}
	}
	return rest, nil
}

func cmdStep(s *Session, args []string) (*Result, error) {
	args, err := s.outputLevel("step", args)
	if err != nil {
		return nil, err
	}
	if err := needArgs("step", args, 0, 1); err != nil {
		return nil, err
	}
	n, read := 1, ""
	if len(args) == 1 {
		// step DURATION in real time: 30s, 1.5m (ticks, rounded up).
		if n, read, err = durationTicks("step", args[0], s.World()); err != nil {
			return nil, err
		}
		if read != "" {
			if err := limitStep.checkf("step", n, fmt.Sprintf("%s = %d ticks", args[0], n)); err != nil {
				return nil, err
			}
		} else if n, err = parseAtLeast("step", "N", args[0], 1, limitStep); err != nil {
			return nil, err
		}
	}
	if err := checkSteps("step", s.World(), n); err != nil {
		return nil, err
	}
	ran, why := s.step(n, nil)
	if why == "interrupted" {
		return nil, interrupted("step")
	}
	r := s.afterRun(ran, why)
	if read != "" {
		r.Text = "step " + read + "\n" + r.Text
	}
	return r, nil
}

func (s *Session) afterRun(ran int, why string) *Result {
	w := s.World()
	c := clockOf(w)
	msg := fmt.Sprintf("%s: group %s, %s", c.tickAt(w.Tick), w.Group.State(), EpochText(w.Group))
	if why != "" {
		after := fmt.Sprintf("%d tick(s)", ran)
		if c.real {
			after += " (" + c.dur(ran) + ")"
		}
		msg = fmt.Sprintf("stopped after %s, %s\n%s", after, why, msg)
	}
	return &Result{Text: msg}
}

func cmdRun(s *Session, args []string) (*Result, error) {
	args, err := s.outputLevel("run", args)
	if err != nil {
		return nil, err
	}
	if len(args) < 2 || args[0] != "until" {
		return nil, usageErr("run", "want `run until stable`, `run until tick N`, `run until time T`, `run until closed|left Cn` or `run until polled|processed RECORD`")
	}
	if args[1] == "time" && len(args) == 3 {
		// run until time T (real time): to the first tick at or after T.
		w := s.World()
		n, read, err := durationTicks("run until time", args[2], w)
		if err == nil && read == "" {
			err = usageErr("run until time", "%s has no unit: a time is a number with a unit (%s), e.g. 10m; for a tick, run until tick %s", args[2], durationUnits, args[2])
		}
		if err != nil {
			return nil, err
		}
		if n > w.Tick {
			if err := checkSteps("run until time "+args[2], w, n-w.Tick); err != nil {
				return nil, err
			}
		}
		ran, why := s.step(limitStep.max, func(w *sim.World) bool { return w.Tick >= n })
		if why == "interrupted" {
			return nil, interrupted("run")
		}
		return s.afterRun(ran, why), nil
	}
	switch {
	case args[1] == "stable" && len(args) == 2:
		bound, recs := runBound(s.World(), min(limitRunUntil.max, limitClock.max-s.World().Tick))
		ran, why := s.step(bound, func(w *sim.World) bool { return w.Settled() })
		if why == "interrupted" {
			return nil, interrupted("run")
		}
		if w := s.World(); why == "" && !w.Settled() && recs {
			return nil, recordsStopped("run until stable", w, ran)
		}
		if w := s.World(); why == "" && !w.Settled() {
			pending := ""
			if p := w.Pending(); len(p) > 0 {
				pending = "; still pending: " + strings.Join(p, "; ")
			}
			return nil, fmt.Errorf("run until stable: the group is not stable after %d ticks (%s)%s", ran, limitRunUntil.helpLine(), pending)
		}
		return s.afterRun(ran, why), nil
	case (args[1] == "closed" || args[1] == "left") && len(args) == 3:
		return runUntilGone(s, args[1], args[2])
	case args[1] == "tick" && len(args) == 3:
		n, err := parseAtLeast("run", "tick", args[2], 0, limitClock)
		if err != nil {
			return nil, err
		}
		if n > s.World().Tick {
			if err := checkSteps("run until tick "+args[2], s.World(), n-s.World().Tick); err != nil {
				return nil, err
			}
		}
		ran, why := s.step(limitStep.max, func(w *sim.World) bool { return w.Tick >= n })
		if why == "interrupted" {
			return nil, interrupted("run")
		}
		return s.afterRun(ran, why), nil
	case (args[1] == "polled" || args[1] == "processed") && (len(args) == 3 || len(args) == 5 && args[3] == "by"):
		kind := sim.EvPolled
		if args[1] == "processed" {
			kind = sim.EvProcessed
		}
		rec, by := args[2], ""
		if len(args) == 5 {
			by = args[4]
			if s.World().Member(by) == nil {
				return nil, fmt.Errorf("run until %s %s by %s: no member %s (members: %s)", args[1], rec, by, by, strings.Join(liveClients(s), " "))
			}
		}
		if !s.World().IsRecord(rec) {
			return nil, fmt.Errorf("run until %s: no input record %q (records are named like %s)", args[1], rec, s.World().Layout().Name(s.World().Layout().Inputs()[0], 3))
		}
		seen := s.World().Events.Len()
		found := false
		bound, recs := runBound(s.World(), min(limitRunUntil.max, limitClock.max-s.World().Tick))
		ran, why := s.step(bound, func(w *sim.World) bool {
			// Headers, then the records of the few of that kind: no text
			// is formatted for the rest, and a run is asked, not spelled.
			for i, h := range w.Events.Headers(seen) {
				if h.Kind == kind && (by == "" || h.Member == by) && w.Events.At(i).Records.Has(rec) {
					found = true
				}
			}
			seen = w.Events.Len()
			return found
		})
		if why == "interrupted" {
			return nil, interrupted("run")
		}
		if why == "" && !found && recs {
			return nil, recordsStopped("run until "+strings.Join(args[1:], " "), s.World(), ran)
		}
		if why == "" && !found {
			cond := args[1] // polled or processed, and by whom if asked
			if by != "" {
				cond += " by " + by
			}
			return nil, fmt.Errorf("run until %s: not %s within %d ticks (%s)", strings.Join(args[1:], " "), cond, ran, limitRunUntil.helpLine())
		}
		return s.afterRun(ran, why), nil
	}
	return nil, usageErr("run", "%q: want `until stable`, `until tick N`, `until time T`, `until closed|left Cn` or `until polled|processed RECORD`", strings.Join(args, " "))
}

func cmdBack(s *Session, args []string) (*Result, error) {
	if err := needArgs("back", args, 0, 1); err != nil {
		return nil, err
	}
	n := 1
	if len(args) == 1 {
		var err error
		if n, err = parseCount("back", "N", args[0], 0, 10_000_000); err != nil {
			return nil, err
		}
	}
	w := s.World()
	if n > w.Tick {
		return nil, fmt.Errorf("back %d: the clock is at tick %d; back goes at most to tick 0 of this world (back %d)", n, w.Tick, w.Tick)
	}
	// From the nearest checkpoint: at most the ticks between two of them
	// are replayed, however long the branch.
	nw, h, err := s.replay(s.cur.hist, w.Tick-n, true)
	if errors.Is(err, ErrInterrupted) {
		return nil, interrupted("back")
	}
	if err != nil {
		return nil, fmt.Errorf("back: %v", err)
	}
	s.cur.world, s.cur.hist, s.cur.frozen = nw, h, false
	return &Result{Text: fmt.Sprintf("back at %s: group %s, %s", clockOf(nw).tickAt(nw.Tick), nw.Group.State(), EpochText(nw.Group))}, nil
}

// maxBranchName bounds a branch name: it is a word typed in commands,
// printed in tables and lists, and written in a saved session's first line.
const maxBranchName = 64

// validBranch accepts a name of letters, digits, '-', '_' and '.': a name is
// one word of the command language (no quoting, ';' and '#' end it), is
// listed after `plot --branches` (',' separates names there), and is
// printed back in tables and errors (no control characters).
func validBranch(cmd, name string) error {
	// Not starting with '-': `switch --json` would read as an option.
	ok := name != "" && utf8.RuneCountInString(name) <= maxBranchName && name[0] != '-'
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '.' {
			ok = false
		}
	}
	if !ok {
		return usageErr(cmd, "%q is not a branch name (1 to %d letters, digits, '-', '_' or '.', not starting with '-')", name, maxBranchName)
	}
	return nil
}

func cmdFork(s *Session, args []string) (*Result, error) {
	if err := needArgs("fork", args, 1, 1); err != nil {
		return nil, err
	}
	name := args[0]
	if err := validBranch("fork", name); err != nil {
		return nil, err
	}
	if _, ok := s.branches[name]; ok {
		return nil, fmt.Errorf("fork %s: a branch %s exists already (branches: %s)", name, name, strings.Join(s.branchNames(), " "))
	}
	// Neither a copy nor a replay: the world now becomes a checkpoint both
	// branches share, with the history before it; the first command that
	// changes either world works on a clone of it.
	b := s.cur
	if !b.frozen {
		b.hist.cps = append(b.hist.cps, &checkpoint{tick: b.world.Tick, next: len(b.hist.inputs), world: b.world})
		b.frozen = true
	}
	// Both count toward their next checkpoint from this one.
	b.cp = cpClock{lastClone: b.cp.lastClone}
	nb := &branch{name: name, hist: b.hist.shared(), world: b.world, frozen: true, cp: b.cp}
	s.branches[name] = nb
	from := s.cur.name
	s.cur = nb
	return &Result{Text: fmt.Sprintf("forked %s from %s at %s; now on %s", name, from, clockOf(nb.world).tickAt(nb.world.Tick), name)}, nil
}

func cmdSwitch(s *Session, args []string) (*Result, error) {
	if err := needArgs("switch", args, 1, 1); err != nil {
		return nil, err
	}
	b, ok := s.branches[args[0]]
	if !ok {
		return nil, fmt.Errorf("switch %s: no branch %s (branches: %s)", args[0], args[0], strings.Join(s.branchNames(), " "))
	}
	s.cur = b
	return &Result{Text: fmt.Sprintf("on %s at %s", b.name, clockOf(b.world).tickAt(b.world.Tick))}, nil
}

func cmdBranches(s *Session, args []string) (*Result, error) {
	if err := needArgs("branches", args, 0, 0); err != nil {
		return nil, err
	}
	t := &Table{Header: []string{"", "BRANCH", "TICK", "STATE", "GENERATION"}}
	for _, n := range s.branchNames() {
		b := s.branches[n]
		mark := ""
		if b == s.cur {
			mark = "*"
		}
		tick := strconv.Itoa(b.world.Tick)
		if c := clockOf(b.world); c.real {
			tick += " (t=" + c.at(b.world.Tick) + ")"
		}
		t.Add(mark, n, tick, string(b.world.Group.State()), strconv.Itoa(generationOf(b.world.Group)))
	}
	return &Result{Text: t.Text(), Table: t, HTML: t.HTML()}, nil
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

// --- completion word lists ---

func liveClients(s *Session) []string {
	var out []string
	for _, c := range s.World().Clients() {
		if m := s.World().Member(c); m != nil && m.Alive {
			out = append(out, c)
		}
	}
	return out
}

func nextClients(s *Session) []string {
	w := s.World()
	var out []string
	for _, c := range w.Clients() {
		if m := w.Member(c); m != nil && !m.Alive {
			out = append(out, c)
		}
	}
	out = append(out, "C"+strconv.Itoa(len(w.Clients())+1))
	return out
}

func shortNames(w *sim.World, tps []sim.TopicPartition) []string {
	var out []string
	for _, tp := range tps {
		out = append(out, tp.String())
		if w.Layout().Short() {
			out = append(out, w.Layout().ShortName(tp))
		}
	}
	return out
}

// settingKeys are the keys set and compare take: every setting, the
// shortcuts commit and producer, and each client's own (C1.KEY).
func settingKeys(s *Session, _ []string, _ string) []string {
	keys := []string{"commit", "producer"}
	for _, st := range sim.Settings {
		keys = append(keys, st.Key)
	}
	for _, c := range s.World().Clients() {
		for _, st := range sim.Settings {
			if st.Client {
				keys = append(keys, c+"."+st.Key)
			}
		}
	}
	return keys
}

// settingValues are the values a setting may take when it lists them
// (Allowed: "range | roundrobin | ..."); a number or a name has none to offer.
func settingValues(key string) []string {
	if _, k, ok := strings.Cut(key, "."); ok && strings.HasPrefix(key, "C") {
		if _, found := sim.LookupSetting(k); found {
			key = k
		}
	}
	switch key {
	case "commit":
		key = "commit.mode"
	case "producer":
		return []string{"plain", "idempotent", "transactional"}
	}
	st, ok := sim.LookupSetting(key)
	if !ok {
		return nil
	}
	// The literal words among the values (NAME | per-member | none
	// offers per-member and none); a number's range offers nothing.
	var vals []string
	for _, v := range strings.Split(st.Allowed, " | ") {
		if isLiteral(v) {
			vals = append(vals, v)
		}
	}
	return vals
}

func inputPartitionWords(s *Session, _ []string, _ string) []string {
	return shortNames(s.World(), s.World().Layout().Inputs())
}

// maxRecordWords bounds the records Tab lists for one partition.
const maxRecordWords = 200

// recordWords completes a record name in two steps: the partitions first
// (o2. or orders-2.), then that partition's offsets that start as typed.
func recordWords(s *Session, _ []string, partial string) []string {
	w := s.World()
	dot := strings.LastIndexByte(partial, '.')
	if dot < 0 {
		var out []string
		for _, p := range shortNames(w, w.Layout().Inputs()) {
			out = append(out, p+".")
		}
		return out
	}
	tp, err := w.Layout().ParsePartition(partial[:dot])
	if err != nil {
		return nil
	}
	var out []string
	for off := 0; off < w.Log(tp).HW() && len(out) < maxRecordWords; off++ {
		if o := strconv.Itoa(off); strings.HasPrefix(o, partial[dot+1:]) {
			out = append(out, partial[:dot+1]+o)
		}
	}
	return out
}

func apiNames(*Session, []string, string) []string {
	var out []string
	for _, t := range sim.APIs {
		out = append(out, string(t))
	}
	return out
}

// placeholderValues fill in the usages' placeholders, unless a command's
// own values say otherwise.
var placeholderValues = map[string]valuesFunc{
	"Cn":     func(s *Session, _ []string, _ string) []string { return liveClients(s) },
	"Cn,...": func(s *Session, _ []string, _ string) []string { return s.World().Clients() },
	"TOPIC-P": func(s *Session, _ []string, _ string) []string {
		w := s.World()
		return append(shortNames(w, w.Layout().Inputs()), shortNames(w, w.Layout().Outputs())...)
	},
	"TOPIC": func(s *Session, _ []string, _ string) []string { return []string{s.World().Topo.Output.Name} },
	"a,b": func(s *Session, _ []string, _ string) []string {
		var out []string
		for _, t := range s.World().Topo.Inputs {
			out = append(out, t.Name)
		}
		return out
	},
	"RECORD": recordWords,
	"CMD":    func(*Session, []string, string) []string { return commandNames() },
	"TYPE":   apiNames,
	"T,...":  apiNames,
	"T1,T2":  apiNames,
	"A,B":    func(s *Session, _ []string, _ string) []string { return s.branchNames() },
	"K,...":  func(*Session, []string, string) []string { return explore.FaultKinds },
	"L":      func(*Session, []string, string) []string { return settingValues("isolation.level") },
	"ID": func(s *Session, _ []string, _ string) []string {
		var ids []string
		for _, e := range s.World().Txn.Entries() {
			ids = append(ids, e.TransactionalID)
		}
		return ids
	},
	"KEY":    settingKeys,
	"Cn.KEY": settingKeys,
	// set KEY VALUE: the key is the word before.
	"VALUE": func(_ *Session, typed []string, _ string) []string {
		if len(typed) == 0 {
			return nil
		}
		return settingValues(typed[len(typed)-1])
	},
	// compare KEY V1,V2,...: likewise.
	"V1,V2,...": func(_ *Session, typed []string, _ string) []string {
		if len(typed) == 0 {
			return nil
		}
		return settingValues(typed[len(typed)-1])
	},
}

// grammar is the command's usage parsed, once.
func (c *command) grammar() *grammar {
	grammarsOnce.Do(func() {
		for _, c := range commands {
			c.gram = parseUsage(c.name, c.usage)
		}
	})
	return c.gram
}

var grammarsOnce sync.Once

// completions are the words that may come next after typed, as the usage
// says, with the placeholders filled in.
func (c *command) completions(s *Session, typed []string, partial string) []string {
	places, opts, valueOf := c.grammar().next(typed, strings.HasPrefix(partial, "-"))
	if valueOf != nil {
		return c.placeWords(s, valueOf.value, typed, partial)
	}
	var out []string
	for _, n := range places {
		out = append(out, c.placeWords(s, n, typed, partial)...)
	}
	for _, o := range opts {
		out = append(out, o.name)
	}
	return out
}

// placeWords are the words a usage word may be: its literals, or its
// placeholder's values; a list (T,...) is completed element by element.
func (c *command) placeWords(s *Session, n *gnode, typed []string, partial string) []string {
	if !n.place {
		return n.words
	}
	name := n.words[0]
	f := c.values[name]
	if f == nil {
		f = placeholderValues[name]
	}
	if f == nil {
		return nil
	}
	if !isList(name) {
		return f(s, typed, partial)
	}
	head := ""
	if i := strings.LastIndexByte(partial, ','); i >= 0 {
		head, partial = partial[:i+1], partial[i+1:]
	}
	have := map[string]bool{}
	for _, e := range strings.Split(head, ",") {
		have[e] = true
	}
	var out []string
	for _, e := range f(s, typed, partial) {
		if !have[e] {
			out = append(out, head+e)
		}
	}
	return out
}

// Complete returns the candidate completions for the last word of line:
// what the command's usage says may come there (a command's name first,
// and a unique start of one stands for it).
func (s *Session) Complete(line string) []string {
	if i := strings.LastIndexByte(line, ';'); i >= 0 {
		line = line[i+1:]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		return nil // a comment
	}
	words := strings.Fields(line)
	partial := ""
	if len(words) > 0 && !strings.HasSuffix(line, " ") {
		partial = words[len(words)-1]
		words = words[:len(words)-1]
	}
	var cands []string
	if len(words) == 0 {
		cands = commandNames()
	} else if c, err := resolve(words[0], nil, ""); err == nil {
		cands = c.completions(s, words[1:], partial)
	}
	var out []string
	seen := map[string]bool{}
	// A word already on the line is not offered again: every option and
	// argument is given once (options twice are refused).
	if len(words) > 0 {
		for _, w := range words[1:] {
			seen[w] = true
		}
	}
	for _, c := range cands {
		if strings.HasPrefix(c, partial) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
