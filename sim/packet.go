package sim

// DropRule loses the next Count packets that match (a `drop` command).
type DropRule struct {
	Type     API
	Response bool
	From, To string // "" matches anyone
	Count    int
}

func (r DropRule) matches(p *Packet) bool {
	return r.Count > 0 && r.Type == p.Type && r.Response == p.Response &&
		(r.From == "" || r.From == p.From) && (r.To == "" || r.To == p.To)
}
