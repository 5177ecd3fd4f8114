// Package sim is kgrepl's engine: a deterministic, tick-based simulation of
// a Kafka consumer group, its producers and one broker, B1. Same inputs,
// same trace, byte for byte.
//
// # The rooms
//
// Each node lives in a package of its own and is handed a small
// environment, never the World (sim/wall_test.go pins the walls):
//
//   - sim/client: a client process, C1, C2, ... (Kafka's consumer with its
//     heartbeat thread, and the producer writing its invoices): a Member
//     made of parts (the poll loop, commits, the subscription state, the
//     producer) and a membership, classic (ConsumerCoordinator) or consumer
//     (KIP-848's ConsumerMembershipManager).
//   - sim/coord: B1's group coordinator (GroupMetadataManager): the group
//     id's group, a ClassicGroup or a ConsumerGroup behind one Group
//     interface, migration between them, and the offsets store both use.
//   - sim/txncoord: B1's transaction coordinator.
//   - sim/broker: B1 as the leader of every partition: the logs, fetch and
//     produce.
//
// Under them: sim/wire (packets and their bodies, errors, timers),
// sim/env (the clock, the wire, the timers, free lists: what a node is
// handed), sim/trace (every packet and event, kept compactly, and their
// text; a world with history.ms keeps only its window's, history.go),
// sim/topo (the topics and their numbering), sim/internal/store
// (storage helpers). The algorithms are packages of their own, tested
// against Kafka's own answers: sim/assign (client-side assignors),
// sim/assign/server (server-side assignors), sim/reconcile (KIP-848's
// CurrentAssignmentBuilder), sim/javaorder (Java's HashMap order).
//
// This package keeps the World: it owns the nodes, routes each packet
// to the node it is for and each timer to its owner, makes the world's
// copies (clone.go calls each node's own Clone), takes the user's inputs
// (commands.go), and observes: the settings (config.go, settings.go,
// config_time.go), the invariants checked every tick (invariants.go) and
// the metrics (metrics.go), the one observer that may read everything. The implicit classic heartbeat, the
// only place where a client's state is read for the coordinator, has a
// file of its own (heartbeat.go).
//
// The World's own state is a few small types it embeds, each with the
// methods that read it, so their fields and methods are the World's by
// the same names: its window of history (history.go, window), its steady
// traffic (traffic.go, steadyTraffic), its logs as the views and checks
// read them (logs.go, logsView), its meters (metrics.go) and its tallies
// (sink.go). A part that reads the world's clock or nodes holds pointers
// to them, which World.connect hands it at New and in a copy: a copy not
// connected would read its original's.
//
// # A packet's journey
//
// A classic member's JoinGroup: the client's membership builds the
// request (client/classic.go), env.Send puts it on the wire and the trace
// records it. At the next tick World.Step delivers it: the World hands
// it to B1's part that answers it (World.brokerReceive: JoinGroup to the
// coordinator), coord.Coordinator.Receive routes it by the kind of group
// (ClassicGroup.onJoin), which keeps it until the join round completes
// (ClassicGroup.tick at the end of the tick), then answers with
// env.Reply. The answer travels back the same way: delivered the tick
// after, to the process it names (World.deliver), whose membership takes
// it at its next poll(). Timers go the same road: a node arms one in its
// environment with its owner's name; when it is due the World hands it
// to that owner (World.fire).
//
// # Touching a process
//
// The pause and unavailability meters keep which partitions each process
// fetches from tick to tick (consumed.go) and look again only at the
// processes the World marked since (World.touch): it marks a process it
// hands a packet, a timer or a turn, one it starts or supersedes, and
// every process a command or a deploy acts on (World.touchAll for many).
// A new entry point that acts on a process must mark it; the package's
// tests recount the set from scratch at every look (checkConsumed, set by
// TestMain) and fail on a process changed unmarked.
package sim
