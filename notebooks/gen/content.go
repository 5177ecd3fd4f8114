package main

// The words of the notebooks. Each demo's notebook is its script (the
// comments are the narration) with these introductions and extra cells.

func tourCells() []cell {
	cells := []cell{
		md(`# A tour of kgrepl

kgrepl simulates an Apache Kafka consumer group tick by tick. The seed page's world: group **billing** reads
**orders** (o0, o1, o2) and **payments** (p0, p1, p2) and writes an invoice per record to **invoices**; C1 reads all six
partitions, and below C2 joins. The same inputs give the same trace, byte for byte, on every run.`),
	}
	cells = append(cells, setup()...)
	cells = append(cells,
		goCell(quiet("join C2; run until stable"), "s.Scrub()"),
		md(scrubNote+"\n\n"+setupNote+"\n\n"+
			"Record `o2.3` is offset 3 of orders-2; its invoice is `inv(o2.3)`. A tick is the unit of time, and every message takes one tick. "+
			"In a notebook, `s.Run` runs commands and shows what the REPL would print at the quiet level demos use (the per-record lines "+
			"summarised one line per member; `run ... --verbose` shows every line), `s.Show` shows one view, `s.Diagram`, `s.Plot` "+
			"and `s.Sequence` draw pictures, `s.Step` animates the diagram tick by tick, and `s.Scrub` draws ticks ahead for the slider."),
		md("## The world at tick 0\n\nC1 is the only member, Stable in generation 1, owning all six partitions; nothing is consumed or committed yet. "+
			"`describe group` prints the columns of `kafka-consumer-groups.sh --describe`."),
		goCell("s.Reset()", show("describe group")),
		md("The diagram is the world now, drawn like the seed's page: the members on the left, B1 on the right with the coordinator's state, "+
			"generation and members, and every partition's log as cells. The green triangle under a log is the group's committed offset "+
			"(where a new owner starts); the bar at the end is the high watermark."),
		goCell("s.Diagram()"),
		md("## A member joins\n\n`join C2` starts a second member. It finds the coordinator, sends JoinGroup, and the coordinator starts a rebalance. "+
			"`s.Step(n)` advances tick by tick and redraws one diagram in place: watch the packets in flight between the members and B1."),
		goCell(run("join C2"), "s.Step(4)"),
		md("`run until stable` goes on until the group is Stable and every member holds its final assignment."),
		goCell(run("run until stable"), show("describe group --members --verbose")),
		md("The rebalance as a sequence diagram: one lane per participant, one arrow per message (answers dashed), the coordinator's decisions as notes. "+
			"`--type` keeps the group protocol and leaves out the fetches and produces."),
		goCell(sequence("--ticks 0..14", "--type FindCoordinator,JoinGroup,SyncGroup,OffsetFetch,RebalanceNotification")),
		md("The same as Mermaid text, for a blog post or a README:"),
		goCell(show("sequence --mermaid --ticks 8..12 --type JoinGroup,SyncGroup")),
		md("## Over time\n\nCharts replay the branch from its start. The pause meter adds up paused partitions × ticks; the bands are the rebalances, "+
			"labelled with the generation they formed and how many partitions they paused."),
		goCell(plot("pause")),
		md("Who consumes which partition, tick by tick: each client has its colour in every picture (C1 is always blue), grey is paused."),
		goCell(plot("timeline")),
		md("## Time travel and what-if branches\n\n`back N` is exactly the state N ticks earlier; `fork NAME` copies the branch. "+
			"Here a branch where C2 crashes right after the rebalance: the coordinator notices only after `session.timeout.ms` (6 ticks)."),
		goCell(run("fork crash; crash C2 now; run until stable"), show("describe group --state")),
		md("Two branches in one chart: `--branches` overlays them."),
		goCell(plot("pause", "--branches main,crash")),
		goCell(run("switch main; back 5"), "s.Diagram()"),
		md("## Where can a failure cost me a record?\n\n`explore` branches the world at every tick of a window, for every member and every fault kind "+
			"(crash, restart, slow record, lost answers, close), runs each branch until the group is stable and caught up, and classifies it "+
			"against the configured guarantee. Commit after processing is at-least-once: crashes cost duplicates (D), never a lost record (L)."),
		goCell(quiet("new --defaults; set commit after; join C2; run until stable"), show("explore --ticks 16..30")),
		md("`compare` reruns this branch's history, as typed, under other settings: a row per combination, the columns equal in every row said once, a verdict on unavailability, duplicates and losses, each member's end, and a panel per metric, each on its own axis."),
		goCell(show("compare partition.assignment.strategy range,cooperative-sticky")),
		md("## Numbers for your own code\n\n`--json` gives one JSON object on one line; `s.Text` returns it without showing it."),
		code(`import "encoding/json"

%%
out, _ := s.Text("metrics --json")
var m struct {
	Tick       int `+"`json:\"tick\"`"+`
	Rebalances int `+"`json:\"rebalances\"`"+`
	Pause      int `+"`json:\"pause_partition_ticks\"`"+`
}
if err := json.Unmarshal([]byte(out), &m); err != nil {
	panic(err)
}
fmt.Printf("tick %d: %d rebalance(s), pause meter %d\n", m.Tick, m.Rebalances, m.Pause)`),
		md("A picture can also be a PNG or a PDF (`--out FILE.png`, `--out FILE.pdf`); without `--out` the REPL writes `KIND.svg`, then `KIND-2.svg`, ... in its folder."),
		goCell(plot("lag", "--out lag.png")),
		md(`## The demos

Each demo of the seed page has its notebook, the same script as `+"`demo N`"+` in the REPL, a step per cell:

1. [A rebalance](01-rebalance.ipynb): JoinGroup, generation 2, the leader's plan in SyncGroup.
2. [Range, eager](02-range-eager.ipynb): C2, C3, C4 join; every rebalance stops the world.
3. [Cooperative-sticky](03-cooperative-sticky.ipynb): two short rebalances per join, only moving partitions pause.
4. [Commit after processing](04-commit-after.ipynb): a crash before the commit, duplicates (at-least-once).
5. [Commit before processing](05-commit-before.ipynb): a crash after the commit, lost records (at-most-once).
6. [Leaving](06-leaving.ipynb): close(), a crash, and a static member that comes back without a rebalance.
7. [Zombie](07-zombie.ipynb): a slow record past max.poll.interval.ms; its commit is rejected.
8. [The idempotent producer](08-idempotent-producer.ipynb): a retry the broker does not write twice.
9. [Idempotence is not enough](09-idempotence-not-enough.ipynb): re-processing writes a second invoice.
10. [Transactions](10-transactions.ipynb): invoices and offsets commit together.
11. [read_committed and the LSO](11-read-committed-lso.ipynb): one open transaction holds every reader back.
12. [Zombie fencing](12-zombie-fencing.ipynb): the group generation and the producer epoch.
13. [The consumer protocol](13-consumer-protocol.ipynb): KIP-848, members join one by one, no stop-the-world.
14. [A rolling restart](14-rolling-restart.ipynb): classic eager, classic cooperative and the consumer protocol, overlaid.
15. [A rolling upgrade](15-rolling-upgrade.ipynb): static members from classic to the consumer protocol and back, online, nobody refused.
16. [An assignor upgrade](16-assignor-upgrade.ipynb): range to cooperative-sticky in two rolling bounces, against the one-bounce shortcut.`),
	)
	return cells
}

// threeJoins are demos 2, 3 and 13's joins, rollingRestart demo 14's
// restarts, for the branches a notebook adds to compare against.
const (
	threeJoins     = "join C2; run until stable; join C3; run until stable; join C4; run until stable"
	rollingRestart = "restart C1; run until stable; restart C2; run until stable; restart C3; run until stable; restart C4; run until stable"
)

var demos = []demoNotebook{
	// 1
	{scrub: "--ticks 0..14",
		intro: `C1 alone reads all six partitions. C2 joins: both send JoinGroup, the coordinator forms generation 2, C1 leads and
alone gets the member list, runs the range assignor on its own machine and sends the plan in SyncGroup; C2 sends an empty
SyncGroup. C1 gets o0 o1 p0 p1 and C2 o2 p2, both fetch their committed offsets, and the group is Stable.`,
		extras: []extra{
			{after: "describe group --members --verbose", cells: []cell{md("The world before C2 joins:"), goCell("s.Diagram()")}},
			{after: "trace --type JoinGroup,SyncGroup,OffsetFetch", cells: []cell{
				md("The same exchange as a sequence diagram, with the heartbeat's rebalance notification that makes C1 rejoin: " +
					"C1's JoinGroup answer carries the member list, C2's does not."),
				goCell(sequence("--ticks 0..14", "--type FindCoordinator,JoinGroup,SyncGroup,OffsetFetch,RebalanceNotification")),
			}},
			{after: "", cells: []cell{
				md("What to look at: B1 says generation 2 and leader C1-1; C1 owns o0 o1 p0 p1 and C2 o2 p2 (range gives each topic's extra partition to the first member). " +
					"The committed offsets are where each new owner started."),
				goCell("s.Diagram()"),
				md("The rebalance over time: all six partitions paused while it ran (eager), then C1 and C2 share them."),
				goCell(plot("timeline"), plot("pause")),
			}},
		}},
	// 2
	{scrub: "--ticks 0..40",
		intro: `Range is the old default and eager: before JoinGroup every member revokes everything it owns, so during a rebalance
nobody consumes anything. C2, C3 and C4 join one after another. Range works per topic, so with 4 members each topic still
has only 3 partitions to hand out and C4 gets nothing.`,
		extras: []extra{
			{after: "", cells: []cell{
				md("Three rebalances, each pausing all six partitions: the pause meter climbs during every band."),
				goCell(plot("pause")),
				md("Who consumes what: after the third join C4 owns nothing (its colour never appears)."),
				goCell(plot("timeline")),
				goCell("s.Diagram()"),
			}},
		}},
	// 3
	{scrub: "--ticks 0..27",
		intro: `The same three joins with cooperative-sticky (KIP-429). Members keep consuming during a rebalance; JoinGroup tells the
leader what each member owns, and a partition still owned elsewhere is not handed out. After SyncGroup each member revokes
only what it lost and rejoins at once: a second rebalance hands those partitions over. Two short rebalances per join, and
only the moving partitions stop: 3, then 2, then 1.`,
		extras: []extra{
			{after: "", cells: []cell{
				md("Only the partitions that move turn grey, and each join is two rebalances (two generations)."),
				goCell(plot("timeline")),
				md("Demo 2 against demo 3 in one chart. The run above is copied to a branch named `cooperative`; a branch `eager` starts a new " +
					"world with range (eager, demo 2's strategy) and makes the same three joins. `--branches` overlays their pause meters."),
				goCell(quiet("fork cooperative"),
					quiet("fork eager; new; set partition.assignment.strategy range; "+threeJoins),
					quiet("switch cooperative"), plot("pause", "--branches eager,cooperative")),
				goCell("s.Diagram()"),
			}},
		}},
	// 4
	{scrub: "--ticks 40..67",
		intro: `Commit after processing (commitSync() after the batch) is at-least-once: the next owner of a partition starts at the
committed offset, not where the last owner stopped. C2 polls p2.3..p2.5, processes two of them (their invoices are written)
and crashes before it commits 6, so the new owner starts at 3 and inv(p2.3) and inv(p2.4) appear twice.`,
		extras: []extra{
			{after: "log p2", cells: []cell{
				md("The moment after the crash: C2 is not running, its invoices for p2.3 and p2.4 are in the log, and payments-2's committed offset is still 3."),
				goCell("s.Diagram()"),
			}},
			{after: "", cells: []cell{
				md("Duplicates appear once C1 processes p2.3 and p2.4 again; nothing is lost."),
				goCell(plot("duplicates")),
				md("The crash, the session timeout and the rebalance that hands o2 and p2 to C1:"),
				goCell(plot("timeline"), plot("lag")),
			}},
		}},
	// 5
	{scrub: "--ticks 28..49",
		intro: `Commit before processing is at-most-once: C2 polls p2.3..p2.5, commits 6 at once, and crashes before processing any of
them. The commit was already on the wire, so it lands; the new owner starts at 6 and p2.3, p2.4 and p2.5 never get an invoice.`,
		extras: []extra{
			{after: "log p2", cells: []cell{
				md("payments-2's committed offset is 6 although nothing past 2 was processed: those three records are behind the pointer with no invoice."),
				goCell("s.Diagram()"),
			}},
			{after: "", cells: []cell{
				md("Lost records, no duplicates:"),
				goCell(plot("duplicates"), plot("timeline")),
			}},
		}},
	// 6
	{scrub: "--ticks 14..66",
		intro: `Three ways to leave. close() sends LeaveGroup and the group rebalances at once. A crash sends nothing: the coordinator
waits session.timeout.ms (6 ticks) of silence first. A static member (group.instance.id) sends no LeaveGroup; restarted within
the session timeout it gets a new member id swapped in, the same assignment, no rebalance and the same generation.`,
		extras: []extra{
			{after: "", cells: []cell{
				md("The timeline shows the three departures: the close rebalances right away, the crash only after the session timeout, " +
					"and the static restart causes no band at all. The pause meter scores the static restart 0, yet its partitions waited " +
					"while it was down and rejoining: the unavailability counts those ticks as owner down, in a darker grey."),
				goCell(plot("timeline"), plot("pause"), plot("unavailable")),
				goCell("s.Diagram()"),
			}},
		}},
	// 7
	{scrub: "--ticks 36..83",
		intro: `A zombie is a member thrown out of the group while it is still working. C2's slow record takes 40 ticks, far past
max.poll.interval.ms (12): its heartbeat thread sends LeaveGroup, the group moves o2 and p2 to C1, which starts at the committed
offset and processes o2.3..o2.5 again. When C2 finally calls commitSync, leaving has reset its generation, so the client throws
CommitFailedException without sending anything, and gives o2 and p2 up as lost (onPartitionsLost).`,
		extras: []extra{
			{after: "run until processed o2.5 by C1", cells: []cell{
				md("Two processes work on orders-2 now: C1, its owner, and C2, the zombie, still in its slow record (red in the diagram)."),
				goCell("s.Diagram()"),
			}},
			{after: "", cells: []cell{
				md("The red-edged bar under orders-2 is C2 processing as a zombie while C1 owns the partition."),
				goCell(plot("timeline")),
				goCell(plot("duplicates")),
				md("The rejected commit in the sequence of the group protocol:"),
				goCell(sequence("--ticks 36..91", "--type OffsetCommit,LeaveGroup,JoinGroup,SyncGroup,RebalanceNotification")),
			}},
		}},
	// 8
	{scrub: "--branch main --ticks 0..12",
		intro: `With enable.idempotence (the default since Kafka 3.0) the producer has a producer id and numbers its records per
partition. The broker keeps the last 5 sequence numbers of each PID: when the answer to C1's first Produce is lost and C1
retries, the broker sees a sequence it already has, does not write it again, and answers the original offset. The branch
` + "`plain`" + ` does the same with a plain producer, and the invoice appears twice.`,
		extras: []extra{
			{after: "trace 12", cells: []cell{
				md("The lost answer and the retry (the ✗ is the lost packet):"),
				goCell(sequence("--ticks 0..12", "--type Produce")),
			}},
			{after: "", cells: []cell{
				md("The two branches side by side: no duplicate with idempotence (main), one without (plain)."),
				goCell(plot("duplicates", "--branches main,plain")),
				md("The plain branch's invoices: inv(o0.0) twice, both from C1."),
				goCell("s.Diagram()"),
			}},
		}},
	// 9
	{scrub: "--ticks 34..60",
		intro: `Sequence numbers protect one producer session only. C2 writes inv(o2.3) and crashes before its commit; C1 takes over
orders-2 at the committed offset and processes o2.3 again with its own PID and a new sequence number. For the broker that is a
new record: a second inv(o2.3).`,
		extras: []extra{
			{after: "", cells: []cell{
				md("In invoices-0 the two inv(o2.3) cells have different colours: C2 wrote one, C1 the other."),
				goCell("s.Diagram()"),
				goCell(plot("duplicates"), plot("timeline")),
			}},
		}},
	// 10
	{scrub: "--ticks 0..15",
		intro: `A consume-process-produce loop is exactly-once when the output and the consumer's offsets commit atomically. With a
transactional.id (tx-C1) each poll batch is a transaction: AddPartitionsToTxn, the writes (white cells: open), AddOffsetsToTxn
and TxnOffsetCommit (pending offsets nobody sees yet), then EndTxn: PrepareCommit, WriteTxnMarkers, CompleteCommit. The COMMIT
markers make the invoices and the offsets visible in one step.`,
		extras: []extra{
			{after: "offsets", cells: []cell{
				md("Before the commit: the three invoices are open (white, dashed), tx-C1 is Ongoing, and no offset is committed yet."),
				goCell("s.Diagram()"),
			}},
			{after: "", cells: []cell{
				md("The full exchange of one transaction:"),
				goCell(sequence("--ticks 0..15", "--type InitProducerId,AddPartitionsToTxn,Produce,AddOffsetsToTxn,TxnOffsetCommit,EndTxn,WriteTxnMarkers")),
				md("After the markers: COMMIT cells in invoices-0, and the committed offsets moved."),
				goCell("s.Diagram()", plot("duplicates")),
			}},
		}},
	// 11
	{scrub: "--branch main --ticks 34..70",
		intro: `A read_committed reader reads only up to the last stable offset (LSO): the first offset of the oldest open transaction.
C2 writes inv(o2.3)..inv(o2.5) in a transaction and crashes before committing it, so the LSO stays on inv(o2.3) and the audit
reader sees nothing past it, not even C1's committed invoices, until the transaction times out (transaction.timeout.ms, 30
ticks). Then ABORT markers, aborted cells skipped, and C1's own invoice for o2.3 seen once. The branch ` + "`restart`" + `
restarts C2 right after the crash: InitProducerId bumps the epoch and aborts at once.`,
		extras: []extra{
			{after: "run until tick 62", cells: []cell{
				md("The LSO (red) sits on C2's open inv(o2.3) while C1 keeps committing transactions after it: the read_committed reader waits."),
				goCell("s.Diagram()"),
			}},
			{after: "consume invoices --isolation read_uncommitted", cells: []cell{
				md("Over time, at both isolation levels: invoices held back by the LSO until the abort, and the duplicates read_uncommitted sees."),
				goCell(plot("duplicates")),
			}},
			{after: "", cells: []cell{
				md("In the restart branch the abort comes at once: ABORT marker, LSO = HW."),
				goCell("s.Diagram()"),
				goCell(plot("duplicates", "--branches main,restart")),
			}},
		}},
	// 12
	{scrub: "--branch main --ticks 44..68",
		intro: `Two fences stop a zombie from committing after its replacement took over. Part 1, the group generation (KIP-447):
TxnOffsetCommit carries the member id and generation, so a member the coordinator removed is refused (UNKNOWN_MEMBER_ID) and
aborts. Part 2, the producer epoch: a restarted instance with the same transactional.id bumps the epoch in InitProducerId; the
old instance is refused with PRODUCER_FENCED and its open transaction is aborted.`,
		extras: []extra{
			{after: "txn tx-C2", cells: []cell{
				md("Part 1 in pictures: C2's TxnOffsetCommit refused, then its abort."),
				goCell(sequence("--ticks 45..68", "--member C2", "--type TxnOffsetCommit,EndTxn,AddOffsetsToTxn,LeaveGroup,JoinGroup")),
				goCell(plot("timeline")),
			}},
			{after: "restart C2", cells: []cell{
				md("Two processes of C2: the old one (a zombie, stuck in p2.4) and the new one about to fence it."),
				goCell("s.Diagram()"),
			}},
			{after: "", cells: []cell{
				md("After the fence: the aborted cells are red, tx-C2 has epoch 1 and more."),
				goCell("s.Diagram()"),
				goCell(plot("timeline")),
			}},
		}},
	// 13
	{scrub: "--ticks 0..36",
		intro: `Kafka 4.0's consumer group protocol (KIP-848, group.protocol=consumer) has no JoinGroup or SyncGroup. Each member sends
ConsumerGroupHeartbeat; a join bumps the group epoch, the coordinator computes the target assignment itself (the uniform
assignor) and reconciles each member on its own: a member gives up a partition after committing and finishing its batch, and
only then does the new owner get it. The other partitions never stop. The same three joins as demos 2 and 3.`,
		extras: []extra{
			{after: "run until stable", cells: []cell{
				md("The first join message by message: the target reaches C1 mid-batch; at its next poll() C1 commits what it " +
					"processed (Kafka 4.0.0 reconciles under auto-commit only from poll()), revokes orders, says so in its next " +
					"heartbeat, and C2's heartbeat answer hands it orders."),
				goCell(sequence("--ticks 0..11", "--type ConsumerGroupHeartbeat,OffsetCommit")),
			}},
			{after: "step 5", cells: []cell{
				md("The world mid-reconciliation: B1 is at group epoch 3 with C3's target {o2 p2}; C1 and C2 are still at epoch 2, " +
					"each finishing the batch of a partition it gives up."),
				goCell("s.Diagram()"),
			}},
			{after: "", cells: []cell{
				md("Who consumes what: one or two partitions turn grey at a time, the others keep their colour through every join."),
				goCell(plot("timeline"), plot("pause")),
				md("Demos 2, 3 and 13 in one chart. The run above is copied to a branch `consumer`; a branch `eager` starts a new world " +
					"(classic, range) and makes the same three joins, and a branch `cooperative` the same with cooperative-sticky."),
				goCell(quiet("fork consumer"),
					quiet("fork eager; new; set partition.assignment.strategy range; "+threeJoins),
					quiet("fork cooperative; new; set partition.assignment.strategy cooperative-sticky; "+threeJoins),
					quiet("switch consumer"), plot("pause", "--branches eager,cooperative,consumer")),
			}},
		}},
	// 14
	{scrub: "--ticks 0..53",
		intro: `A deployment restarts its consumers one at a time. Here four members are restarted in turn; each old process stops without
a LeaveGroup and the coordinator drops it after the session timeout. Under classic eager every restart stops all six
partitions; under cooperative-sticky only the restarted member's partitions stop; under the consumer protocol each restart is
two group epoch bumps that each move a few partitions while the rest keep going.`,
		extras: []extra{
			{after: "metrics", cells: []cell{
				md("The eager run: four bands, all six partitions grey in each."),
				goCell(plot("timeline")),
			}},
			{after: "", cells: []cell{
				md("The same comparison as grouped bars:"),
				goCell(show("compare group.protocol classic,consumer partition.assignment.strategy range,cooperative-sticky")),
				md("And over time: the run above is copied to a branch `eager`, then the same rolling restart runs in a branch `cooperative` " +
					"(cooperative-sticky) and in a branch `consumer` (group.protocol=consumer). `--branches` overlays their pause meters."),
				goCell(quiet("fork eager"),
					quiet("fork cooperative; set partition.assignment.strategy cooperative-sticky; new --members 4 --keep-settings; "+rollingRestart),
					quiet("fork consumer; set group.protocol consumer; new --members 4 --keep-settings; "+rollingRestart),
					plot("pause", "--branches eager,cooperative,consumer")),
				md("The consumer branch: each restart moves a partition or two at a time, twice (when the new member joins and when the old one is removed)."),
				goCell(plot("timeline"), "s.Diagram()"),
			}},
		}},
	// 15
	{scrub: "--ticks 0..76",
		intro: `The upgrade users fear most, with static members as a StatefulSet runs them: four classic members (cooperative-sticky,
group.instance.id billing-0 to billing-3) are restarted one at a time with group.protocol=consumer, then rolled back. The first
consumer-protocol heartbeat converts the classic group into a consumer group (Kafka's ConsumerGroup.fromClassicGroup) and
replaces its classic static member at once; the members still on the classic protocol stay in it, marked UPGRADED false. The
rollback's last classic instance converts the group back. Nobody is refused.`,
		extras: []extra{
			{after: "describe group --members --verbose", cells: []cell{
				md("The conversion message by message: C4-2's first ConsumerGroupHeartbeat converts the group at t=3 and takes " +
					"C4-1's place and partitions; the classic members are told REBALANCE_IN_PROGRESS, rejoin, and get from SyncGroup " +
					"what the uniform assignor decided; C1 and C2 first get their assignment minus the orders partition they revoke."),
				goCell(sequence("--ticks 0..18", "--type ConsumerGroupHeartbeat,JoinGroup,SyncGroup,RebalanceNotification", "--width 1100")),
				md("The world once converted: C4-2 speaks the consumer protocol, C1-1 to C3-1 are classic members of the consumer group."),
				goCell("s.Diagram()"),
			}},
			{after: "", cells: []cell{
				md("Who consumes what through the upgrade and the rollback: three partitions move once, at the conversion; every " +
					"restart after it hands its member's partitions to the new process."),
				goCell(plot("timeline")),
				md("Against dynamic members. The run above is copied to a branch `static`; a branch `dynamic` makes the same eight " +
					"restarts with no group.instance.id: each restart is a new member joining and the old one's session timing out, " +
					"two rebalances each: 16 and 196 partition x ticks paused, against the static members' one and 25."),
				goCell(quiet("fork static"),
					quiet("fork dynamic; set C1.group.protocol classic; set C2.group.protocol classic; set C3.group.protocol classic; "+
						"set C4.group.protocol classic; set C1.group.instance.id none; set C2.group.instance.id none; "+
						"set C3.group.instance.id none; set C4.group.instance.id none; new --members 4 --keep-settings; "+
						"set C4.group.protocol consumer; restart C4; run until stable; set C3.group.protocol consumer; restart C3; run until stable; "+
						"set C2.group.protocol consumer; restart C2; run until stable; set C1.group.protocol consumer; restart C1; run until stable; "+
						"set C4.group.protocol classic; restart C4; run until stable; set C3.group.protocol classic; restart C3; run until stable; "+
						"set C2.group.protocol classic; restart C2; run until stable; set C1.group.protocol classic; restart C1; run until stable"),
					quiet("switch static"), plot("pause", "--branches static,dynamic")),
			}},
		}},
	// 16
	{scrub: "--ticks 0..21",
		intro: `Switching a classic group from range to cooperative-sticky is a rolling restart of every member, and how it is done
decides whether the group survives it. Kafka's client takes partition.assignment.strategy as a list; the coordinator runs the
assignor its members vote for (ClassicGroup.selectProtocol) and refuses a member whose list shares none with the group
(INCONSISTENT_GROUP_PROTOCOL); a member is cooperative only if every assignor it lists is. KIP-429's answer is two bounces:
first every member to cooperative-sticky,range, then every member to cooperative-sticky alone. The shortcut, one bounce
straight to cooperative-sticky, stops every restarted member.`,
		extras: []extra{
			{after: "metrics", cells: []cell{
				md("The two bounces over time: generations 2 to 4 pause all six partitions (every member still lists range, so all are eager); " +
					"in generation 5 C1, now cooperative, keeps consuming."),
				goCell(plot("timeline")),
			}},
			{after: "", cells: []cell{
				md("The shortcut: once C2-1's session has timed out nobody is left, and the group is Empty with every partition unread."),
				goCell("s.Diagram()", plot("timeline")),
				md("Both branches' pause meters: the shortcut's stops growing only because nothing is consumed any more; the lag keeps growing."),
				goCell(plot("pause", "--branches main,shortcut")),
			}},
		}},
}
