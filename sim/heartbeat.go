package sim

// The implicit classic heartbeat (the seed's simplification: a live member
// is heard every tick, SPEC §3). A classic client's heartbeat thread sends
// no packets here, so the coordinator and the client meet in this file,
// the one place where either learns of the other other than by packets:
// the coordinator asks what a member's process does (coord.Processes), and
// a client's heartbeat thread starting or stopping is told to the
// coordinator (client.Host: classicMember.beatChange and setMemberID,
// Member.Stop).

// Alive reports whether client's process inc runs (coord.Processes).
func (w *World) Alive(client string, inc int) bool {
	m := w.process(client, inc)
	return m != nil && m.Alive
}

// GoesBy reports whether client's process inc runs and goes by member id
// memberID (coord.Processes).
func (w *World) GoesBy(client string, inc int, memberID string) bool {
	m := w.process(client, inc)
	return m != nil && m.Alive && m.MemberID == memberID
}

// InGroupAs reports whether client's process inc runs, goes by memberID
// and is not out of the group (coord.Processes).
func (w *World) InGroupAs(client string, inc int, memberID string) bool {
	m := w.process(client, inc)
	return m != nil && m.Alive && m.MemberID == memberID && m.Phase != PhaseOut
}

// Heartbeating reports whether client's process inc goes by memberID and
// its classic heartbeat thread sends heartbeats (coord.Processes).
func (w *World) Heartbeating(client string, inc int, memberID string) bool {
	m := w.process(client, inc)
	return m != nil && m.MemberID == memberID && m.Heartbeats()
}

// HeartbeatStopped: the process going by memberID stopped sending classic
// heartbeats (client.Host): the coordinator hears it no more.
func (w *World) HeartbeatStopped(memberID string) { w.Group.HeartbeatStopped(memberID) }

// HeartbeatStarted: it sends them again.
func (w *World) HeartbeatStarted(memberID string) { w.Group.HeartbeatStarted(memberID) }

// MemberIDDropped: a live process goes by another member id now.
func (w *World) MemberIDDropped(memberID string) { w.Group.MemberIDDropped(memberID) }

// ProcessStopped: client's process inc stopped.
func (w *World) ProcessStopped(client string, inc int) { w.Group.ProcessStopped(client, inc) }
