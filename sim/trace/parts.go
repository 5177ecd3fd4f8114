package trace

import (
	"fmt"
	"strings"

	"github.com/kgrepl/kgrepl/sim/topo"
	"github.com/kgrepl/kgrepl/sim/wire"
)

// Parts is a partition list a text names ({o0 o1 p0}, Layout.PartList):
// Eventf and Textf keep it as a token, by the partitions' numbers (runs
// of them for a long list), where a spelled list of 100,000 partitions
// took 8 bytes a partition; anything else formats it as PartList spells
// it.
type Parts struct {
	L   *topo.Layout
	TPs []wire.TopicPartition
}

func (p Parts) String() string { return p.L.PartList(p.TPs) }

// Positions is a list of positions or commits a text names (o0@3 o1@5,
// Layout.Offsets), kept as Parts is.
type Positions struct {
	L    *topo.Layout
	TPs  []wire.TopicPartition
	Offs []int
}

func (p Positions) String() string { return p.L.Offsets(p.TPs, p.Offs) }

// listMark stands for a Parts or Positions argument in the formatted text
// encLists splits; a text that holds it otherwise is spelled as it is.
const listMark = "\x00"

// encLists encodes format and args as a text whose Parts and Positions
// arguments are tokens, the rest literal; false (nothing encoded) when
// args hold none of them, or the text holds listMark of its own.
func (tx *texts) encLists(format string, args []any) ([]byte, bool) {
	n := 0
	for _, a := range args {
		switch a.(type) {
		case Parts, Positions:
			n++
		}
	}
	if n == 0 {
		return nil, false
	}
	marked := make([]any, len(args))
	for i, a := range args {
		switch a.(type) {
		case Parts, Positions:
			marked[i] = listMark
		default:
			marked[i] = a
		}
	}
	s := fmt.Sprintf(format, marked...)
	if strings.Count(s, listMark) != n {
		return nil, false
	}
	b := tx.scratch[:0]
	k := 0
	for _, a := range args {
		var lst []byte
		switch a := a.(type) {
		case Parts:
			lst = tx.encPartList(tx.lists[:0], a.TPs)
		case Positions:
			lst = tx.encOffsetsAt(tx.lists[:0], a.TPs, nil, a.Offs)
		default:
			continue
		}
		tx.lists = lst // its array, for the next list
		j := strings.Index(s[k:], listMark)
		if j > 0 {
			b = encLit(b, s[k:k+j])
		}
		b = append(b, lst...)
		k += j + len(listMark)
	}
	if k < len(s) {
		b = encLit(b, s[k:])
	}
	return b, true
}

// Textf is a packet's summary formatted as Eventf formats an event's
// text, kept in the arena: its Parts and Positions arguments as tokens.
func (t *Trace) Textf(format string, args ...any) wire.TextRef {
	if b, ok := t.encLists(format, args); ok {
		return t.addText(b)
	}
	return t.addText(encLit(t.scratch[:0], fmt.Sprintf(format, args...)))
}
