// Package wire is what travels between kgrepl's nodes: the partition a
// message names, the Kafka APIs and their request and response bodies, the
// error codes, the packet that carries one message for one tick, and the
// timers a node arms. It knows nothing of who sends or answers: the client
// (sim/client), the group coordinator (sim/coord), the transaction
// coordinator (sim/txncoord) and the partition leader (sim/broker) all
// speak it, and the World (sim) only routes it.
//
// A body is never changed once sent: a clone of a world shares the bodies
// of the packets on its wire.
package wire
