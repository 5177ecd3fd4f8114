package store

// NameTable numbers the strings a compact log repeats in every record
// (member ids in __consumer_offsets, transactional ids and groups in
// __transaction_state), so a record keeps an int32 instead of a 16-byte
// string header. Append-only: a clone shares names with its capacity cut,
// so an append on either side copies it; at is never written once made (a
// new name makes a new map), so clones share it too. Names are new only at
// a join, a restart or a new transactional id: rare, and the copies small.
type NameTable struct {
	names []string
	at    map[string]int32
	// recent: the answers of at for the strings a tick passes again and
	// again (a member's MemberID in each of its commits), a copy's own.
	recent StrCache[string, int32]
}

// Index is name's number, added if new.
func (t *NameTable) Index(name string) int32 {
	if i, ok := t.recent.Get(name); ok {
		return i
	}
	if i, ok := t.at[name]; ok {
		t.recent.Put(name, i)
		return i
	}
	i := Int32Of(len(t.names), "names in a log")
	at := make(map[string]int32, len(t.at)+1)
	for k, v := range t.at {
		at[k] = v
	}
	at[name] = i
	t.names, t.at = append(t.names, name), at
	return i
}

// Name is the string numbered i.
func (t *NameTable) Name(i int32) string { return t.names[i] }

func (t *NameTable) Clone() NameTable {
	return NameTable{names: t.names[:len(t.names):len(t.names)], at: t.at, recent: t.recent}
}
