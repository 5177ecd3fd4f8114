package kernel

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kgrepl/kgrepl/sim"
)

// describeConsumerGroup is `describe group` for a consumer group (KIP-848),
// as Kafka 4.x's kafka-consumer-groups.sh prints one (KIP-1099,
// ConsumerGroupCommand.printStates / printMembers / printOffsets):
//   - --state: GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE GROUP-EPOCH
//     TARGET-ASSIGNMENT-EPOCH #MEMBERS. Kafka prints the two epochs only with
//     --verbose; kgrepl prints them always, as it prints the classic group's
//     GENERATION, since they are what a consumer group's state is about.
//   - --members: GROUP CONSUMER-ID [GROUP-INSTANCE-ID] HOST CLIENT-ID
//     #PARTITIONS, GROUP-INSTANCE-ID only when some member is static (Kafka
//     4.x's rule); --verbose adds CURRENT-EPOCH CURRENT-ASSIGNMENT
//     TARGET-EPOCH TARGET-ASSIGNMENT, and UPGRADED when classic and
//     consumer-protocol members share the group (online migration).
//     Assignments are spelled as Kafka 4.x spells them: orders:0,1;payments:2.
//   - the offsets view keeps its classic columns; a partition's owner is the
//     member whose current assignment holds it, also while the group is
//     Assigning or Reconciling (there is no stop-the-world to hide it).
func describeConsumerGroup(s *Session, w *sim.World, g sim.GroupDescription, fl map[string]string, nm naming) (*Result, error) {
	rebalancing := g.State == sim.Assigning || g.State == sim.Reconciling
	members := g.Members
	if fl["--json"] == "true" {
		d := describeJSON{Group: g.ID, State: string(g.State), Protocol: string(sim.ConsumerGroup),
			Assignor: strPtr(g.Assignor), groupEpochsJSON: &groupEpochsJSON{GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch},
			Members: []memberJSON{}, Rebalance: rebalancing, Paused: tpNames(w.PausedPartitions())}
		for _, gm := range members {
			d.Members = append(d.Members, memberJSON{MemberID: gm.MemberID, ClientID: gm.ClientID,
				InstanceID: strPtr(gm.InstanceID), Partitions: tpNames(gm.Assignment),
				memberEpochJSON: &memberEpochJSON{MemberEpoch: gm.MemberEpoch, Target: tpNames(gm.Target),
					MemberState: dash(gm.MemberState), Revoking: tpNames(gm.Revoking), Upgraded: !gm.ClassicMember},
				realNameJSON: nm.json(gm.ClientID)})
		}
		var err error
		if d.Offsets, err = offsetRows(s, w, g, true); err != nil {
			return nil, err
		}
		d.Extra = map[string]any{"coordinator": sim.Broker, "pending_transactional_offsets": pendingList(w)}
		line := jsonLine(d)
		return &Result{Text: line, JSON: line}, nil
	}
	var header string
	if rebalancing {
		header = fmt.Sprintf("Consumer group '%s' is rebalancing (%s, group epoch %d, target assignment epoch %d).\n\n",
			g.ID, g.State, g.GroupEpoch, g.AssignmentEpoch)
	}
	if len(members) == 0 && g.State == sim.Empty {
		header = fmt.Sprintf("Consumer group '%s' has no active members.\n\n", g.ID)
	}
	var t *Table
	switch {
	case fl["--state"] == "true":
		t = &Table{Header: []string{"GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
			"TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"}}
		t.Add(g.ID, sim.Broker+" (1)", dash(g.Assignor), string(g.State), strconv.Itoa(g.GroupEpoch),
			strconv.Itoa(g.AssignmentEpoch), strconv.Itoa(len(members)))
	case fl["--members"] == "true":
		static, classic, upgraded := false, false, false
		for _, gm := range members {
			static = static || gm.InstanceID != ""
			classic = classic || gm.ClassicMember
			upgraded = upgraded || !gm.ClassicMember
		}
		mixed := classic && upgraded
		h := []string{"GROUP", "CONSUMER-ID"}
		if static {
			h = append(h, "GROUP-INSTANCE-ID")
		}
		h = append(h, "HOST", "CLIENT-ID", "#PARTITIONS")
		verbose := fl["--verbose"] == "true"
		if verbose {
			h = append(h, "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT")
			if mixed {
				h = append(h, "UPGRADED")
			}
		}
		t = &Table{Header: h}
		for _, gm := range members {
			row := []string{g.ID, gm.MemberID}
			if static {
				row = append(row, dash(gm.InstanceID))
			}
			row = append(row, nm.host(gm.ClientID), nm.client(gm.ClientID), strconv.Itoa(len(gm.Assignment)))
			if verbose {
				row = append(row, strconv.Itoa(gm.MemberEpoch), assignmentText4(gm.Assignment),
					strconv.Itoa(g.AssignmentEpoch), assignmentText4(gm.Target))
				if mixed {
					row = append(row, strconv.FormatBool(!gm.ClassicMember))
				}
			}
			t.Add(row...)
		}
	default:
		var err error
		if t, err = offsetsTable(s, w, g, true, nm); err != nil {
			return nil, err
		}
	}
	return &Result{Text: header + t.Text(), Table: t, HTML: s.htmlOf(t)}, nil
}

// assignmentText4 is Kafka 4.x's spelling of an assignment in
// `--members --verbose` (ConsumerGroupCommand.getAssignmentString): each
// topic as topic:p,p with partitions in order, topics sorted, joined by
// ";"; "-" when empty. The classic view keeps the older orders(0,1) form.
func assignmentText4(tps []sim.TopicPartition) string {
	if len(tps) == 0 {
		return "-"
	}
	byTopic := map[string][]int{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	var parts []string
	for topic, ps := range byTopic {
		sort.Ints(ps)
		nums := make([]string, len(ps))
		for i, p := range ps {
			nums[i] = strconv.Itoa(p)
		}
		parts = append(parts, topic+":"+strings.Join(nums, ","))
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

// EpochText names where the group is in its rebalances: "generation N" for
// a classic group, "group epoch N" for a consumer group (KIP-848 has no
// generation; the group epoch is what a change of membership or
// subscriptions bumps).
func EpochText(g *sim.Group) string {
	if g.Type() == sim.ConsumerGroup {
		return "group epoch " + strconv.Itoa(g.Epoch())
	}
	return "generation " + strconv.Itoa(g.Epoch())
}

// generationOf is the number metrics, compare and explore report as the
// group's generation: the classic generation, or a consumer group's group
// epoch (the pause meter keys a consumer group's pauses by group epoch too).
func generationOf(g *sim.Group) int { return g.Epoch() }
