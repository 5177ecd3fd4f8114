package env

import "github.com/kgrepl/kgrepl/sim/wire"

// DropRule loses the next Count packets that match (a `drop` command).
type DropRule struct {
	Type     wire.API
	Response bool
	From, To string // "" matches anyone
	Count    int
}

func (r DropRule) matches(p *wire.Packet) bool {
	return r.Count > 0 && r.Type == p.Type && r.Response == p.Response &&
		(r.From == "" || r.From == p.From) && (r.To == "" || r.To == p.To)
}
