package kernel

import (
	"strings"
	"testing"

	"github.com/kgrepl/kgrepl/sim"
)

// groupProtocols checks that the group's type agrees with every member's
// own protocol and returns the type and the classic members' clients.
func groupProtocols(t *testing.T, w *sim.World) (sim.GroupType, string) {
	t.Helper()
	var classic []string
	for _, gm := range w.Group.Members() {
		var speaks sim.GroupType
		for _, m := range w.Processes() {
			if m.Client == gm.ClientID && m.Inc == gm.Inc {
				speaks = m.GroupProtocol()
			}
		}
		isClassic := w.Group.Type() == sim.ClassicGroup || gm.ClassicMember
		if isClassic != (speaks == sim.ClassicGroup) {
			t.Errorf("tick %d: %s in a %s group (classic member %v) speaks %q", w.Tick, gm.MemberID, w.Group.Type(), gm.ClassicMember, speaks)
		}
		if isClassic {
			classic = append(classic, gm.ClientID)
		}
	}
	return w.Group.Type(), strings.Join(classic, " ")
}

// `new --keep-settings` after per-client group.protocol settings builds the
// group those members make (demo 15 leaves C1..C4 each on consumer, over
// the classic default), and it settles after a restart.
func TestNewWorldFollowsPerClientProtocols(t *testing.T) {
	cases := []struct {
		name, setup string
		want        sim.GroupType
		classic     string
	}{
		{"after demo 15 (its rollback sets every member back to classic)", "demo 15", sim.ClassicGroup, "C1 C2 C3 C4"},
		{"mixed", "set C1.group.protocol consumer; set C3.group.protocol consumer", sim.ConsumerGroup, "C2 C4"},
		{"mixed, migration disabled", "set group.consumer.migration.policy disabled; set C2.group.protocol consumer", sim.ConsumerGroup, "C1 C3 C4"},
		{"all classic over the consumer default", "set group.protocol consumer; set C1.group.protocol classic; set C2.group.protocol classic; set C3.group.protocol classic; set C4.group.protocol classic", sim.ClassicGroup, "C1 C2 C3 C4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := checkedSession(t)
			for _, line := range strings.Split(tc.setup+"; new --members 4 --keep-settings", "; ") {
				if _, err := s.Exec(line); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
			}
			if typ, classic := groupProtocols(t, s.World()); typ != tc.want || classic != tc.classic {
				t.Fatalf("new world: %s group, classic members %q; want %s, %q", typ, classic, tc.want, tc.classic)
			}
			for _, cl := range []string{"C1", "C2"} {
				if _, err := s.Exec("restart " + cl); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Exec("run until stable"); err != nil {
					t.Fatalf("after restart %s: %v", cl, err)
				}
				w := s.World()
				if typ, classic := groupProtocols(t, w); typ != tc.want || classic != tc.classic || len(w.Group.Members()) != 4 {
					t.Fatalf("after restart %s: %s group of %d, classic members %q; want %s of 4, %q", cl, typ, len(w.Group.Members()), classic, tc.want, tc.classic)
				}
			}
		})
	}
}
