package sim

// The implicit classic heartbeat (the seed's simplification: a live member
// is heard every tick, SPEC §3). A classic client's heartbeat thread sends
// no packets here, so the coordinator and the client meet in this file,
// the one place where either learns of the other other than by packets:
// the coordinator asks what a member's process does (coord.Processes,
// answered by the process table), and a client's heartbeat thread starting
// or stopping is told to the coordinator (client.Host, through the world's
// clientHost).

// Alive reports whether client's process inc runs (coord.Processes).
func (t *processTable) Alive(client string, inc int) bool {
	m := t.process(client, inc)
	return m != nil && m.Alive
}

// GoesBy reports whether client's process inc runs and goes by member id
// memberID (coord.Processes).
func (t *processTable) GoesBy(client string, inc int, memberID string) bool {
	m := t.process(client, inc)
	return m != nil && m.Alive && m.MemberID == memberID
}

// InGroupAs reports whether client's process inc runs, goes by memberID
// and is not out of the group (coord.Processes).
func (t *processTable) InGroupAs(client string, inc int, memberID string) bool {
	m := t.process(client, inc)
	return m != nil && m.Alive && m.MemberID == memberID && m.Phase != PhaseOut
}

// Heartbeating reports whether client's process inc goes by memberID and
// its classic heartbeat thread sends heartbeats (coord.Processes).
func (t *processTable) Heartbeating(client string, inc int, memberID string) bool {
	m := t.process(client, inc)
	return m != nil && m.MemberID == memberID && m.Heartbeats()
}

// HeartbeatStopped: the process going by memberID stopped sending classic
// heartbeats (client.Host): the coordinator hears it no more.
func (h *clientHost) HeartbeatStopped(memberID string) { h.group.HeartbeatStopped(memberID) }

// HeartbeatStarted: it sends them again.
func (h *clientHost) HeartbeatStarted(memberID string) { h.group.HeartbeatStarted(memberID) }

// MemberIDDropped: a live process goes by another member id now.
func (h *clientHost) MemberIDDropped(memberID string) { h.group.MemberIDDropped(memberID) }

// ProcessStopped: client's process inc stopped.
func (h *clientHost) ProcessStopped(client string, inc int) { h.group.ProcessStopped(client, inc) }
