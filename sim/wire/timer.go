package wire

// Owner says which node a timer is for: the World hands a fired timer to
// it, and the node's own kinds say what it does.
type Owner uint8

const (
	// OwnerClient: a client process's timer; Client, Inc and Proc name the
	// process.
	OwnerClient Owner = iota
	// OwnerGroupCoordinator: the group coordinator's; Member names the
	// member (or the round, by Key).
	OwnerGroupCoordinator
	// OwnerTxnCoordinator: the transaction coordinator's; Member names the
	// transactional id.
	OwnerTxnCoordinator
)

// Timer is something due at a tick. Timers are data, not closures, so a
// world can be copied; one that no longer applies checks that itself when
// it fires (Key no longer matches). Timers due at the same tick fire in
// the order they were set (Seq).
type Timer struct {
	At, Seq int // due tick; order among the timers (the queue's)
	Owner   Owner
	Kind    uint8 // what it does, in its owner's own numbering
	// A client process's timers: the process.
	Client string
	Inc    int
	Proc   int32 // the process's number plus one, when known; 0 when not
	// The group coordinator's timers: the member id; the transaction
	// coordinator's: the transactional id.
	Member string
	// Key is the number the timer was set for (a request, an attempt, a
	// round, a generation, a timer of the member's): when it fires and no
	// longer matches, it does nothing. Arg is a second number some kinds
	// carry (an attempt, an epoch, a delay, an incarnation, a flag).
	Key, Arg int
}
