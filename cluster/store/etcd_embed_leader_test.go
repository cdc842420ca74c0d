package store

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestTheRaftLeadershipIsHandedOffToAMemberAccepted: the member leading
// raft hands it to the other member it accepts, and a member that does
// not lead has nothing to hand off.
func TestTheRaftLeadershipIsHandedOffToAMemberAccepted(t *testing.T) {
	members := startCluster(t, "a", "b", "c")
	if got := members[0].Members(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("Members() = %v, want a b c", got)
	}
	leader, follower := raftLeaderOf(t, members), -1
	for i := range members {
		if i != leader {
			follower = i
			break
		}
	}
	if to, err := members[follower].HandOffRaftLeadership(deadline(t), nil, time.Second); to != "" || err != nil {
		t.Fatalf("a follower's hand-off: %q, %v; want nothing to do", to, err)
	}
	want := members[follower].Members()[follower]
	to, err := members[leader].HandOffRaftLeadership(deadline(t), only(want), 2*time.Second)
	if err != nil || to != want {
		t.Fatalf("hand-off: %q, %v; want it taken by %s", to, err, want)
	}
	if members[leader].RaftLeader() || !members[follower].RaftLeader() {
		t.Fatalf("after the hand-off to %s the old leader still leads, or %s does not", want, want)
	}
	if _, err := members[follower].HandOffRaftLeadership(deadline(t), func(string) (int, bool) { return 0, false }, time.Second); !errors.Is(err, ErrNoTransferee) {
		t.Fatalf("a hand-off with no member accepted: %v, want ErrNoTransferee", err)
	}
}

// raftLeaderOf waits, within the test's deadline, until one member leads
// raft (each leader change of the first member's is an event to look
// again at), and returns its index.
func raftLeaderOf(t *testing.T, members []*Embedded) int {
	t.Helper()
	ctx := deadline(t)
	for {
		changed := members[0].RaftLeaderChanged()
		for i, m := range members {
			if m.RaftLeader() {
				return i
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("no member leads raft")
		case <-changed:
		}
	}
}

// TestTheRaftLeadershipIsNotOfferedToAMemberThatDoesNotAnswer: a member
// stopped is never offered the leadership (a transfer to it would drop
// every proposal until raft gave up): with it the only one accepted, the
// hand-off answers at once that nobody took it, though each offer may
// wait an hour.
func TestTheRaftLeadershipIsNotOfferedToAMemberThatDoesNotAnswer(t *testing.T) {
	members := startCluster(t, "a", "b", "c")
	leader := raftLeaderOf(t, members)
	gone := (leader + 1) % len(members)
	name := members[leader].Members()[gone]
	members[gone].Close()
	to, err := members[leader].HandOffRaftLeadership(deadline(t), only(name), time.Hour)
	if !errors.Is(err, ErrNoTransferee) || to != "" {
		t.Fatalf("a hand-off to the stopped %s only: %q, %v; want ErrNoTransferee", name, to, err)
	}
	if !members[leader].RaftLeader() {
		t.Fatal("the leader lost the raft leadership")
	}
}

// only ranks the member named alone.
func only(name string) func(string) (int, bool) {
	return func(n string) (int, bool) { return 0, n == name }
}

// TestTheRaftLeadershipGoesToTheMemberRankedFirst: of two members
// accepted, the one ranked lower takes it, whatever their names.
func TestTheRaftLeadershipGoesToTheMemberRankedFirst(t *testing.T) {
	members := startCluster(t, "a", "b", "c")
	leader := raftLeaderOf(t, members)
	names := members[leader].Members()
	first, last := names[(leader+1)%3], names[(leader+2)%3]
	if first < last {
		first, last = last, first // the member ranked first has the later name
	}
	rank := func(n string) (int, bool) { return map[string]int{first: 1, last: 2}[n], n != names[leader] }
	if to, err := members[leader].HandOffRaftLeadership(deadline(t), rank, 2*time.Second); err != nil || to != first {
		t.Fatalf("hand-off: %q, %v; want it taken by %s, ranked before %s", to, err, first, last)
	}
}
