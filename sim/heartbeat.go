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

// NextHeartbeat is the tick the next heartbeat of client's process inc
// reaches the coordinator after tick from, when its classic heartbeat
// thread sends one every heartbeat.interval.ms (coord.Processes): sent at
// since + k x interval (k from 1: client.Member.HeartbeatSchedule),
// arriving a tick later. ok is false for the implicit heartbeat.
func (t *processTable) NextHeartbeat(client string, inc int, from int) (int, bool) {
	since, every, ok := t.schedule(client, inc)
	if !ok {
		return 0, false
	}
	first := since + every + 1 // the first heartbeat's arrival
	if from < first {
		return first, true
	}
	return first + ((from-first)/every+1)*every, true
}

// LastHeartbeat is the tick the last heartbeat of client's process inc
// reached the coordinator at or before now (coord.Processes). Before its
// first, what the coordinator last heard is the SyncGroup the client sent
// as its JoinGroup answer enabled the heartbeat thread, a tick after.
func (t *processTable) LastHeartbeat(client string, inc int, now int) (int, bool) {
	since, every, ok := t.schedule(client, inc)
	if !ok {
		return 0, false
	}
	first := since + every + 1
	if now < first {
		return min(since+1, now), true
	}
	return first + (now-first)/every*every, true
}

func (t *processTable) schedule(client string, inc int) (since, every int, ok bool) {
	m := t.process(client, inc)
	if m == nil {
		return 0, 0, false
	}
	return m.HeartbeatSchedule()
}
