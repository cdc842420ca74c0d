package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
)

// A group on a stream of replication factor 3: its leader's consumers ack
// some records and leave others unacked; once the followers hold the
// group's logs the leader stops, and on the promoted leader the group
// resumes after the acked records (none is delivered again) and delivers
// the unacked ones again.
func TestAGroupPositionSurvivesALeaderFailover(t *testing.T) {
	gc := startGroupCluster(t, group.Options{})
	recs := gc.pollAll("g")
	acked, unacked := recs[:5], recs[5:]
	gc.onLeader(func(m *group.Manager) error { return m.Ack(gc.key("g"), "c1", acked) })
	gc.awaitFollowersHoldTheGroupLogs(0)
	next := gc.failover()

	var got []int64
	gc.onLeader(func(m *group.Manager) error {
		d, err := m.Poll(context.Background(), group.PollRequest{Key: gc.key("g"), Consumer: "c2", Max: 100})
		got = deliveredOffsets(d)
		return err
	})
	for _, o := range acked {
		if slices.Contains(got, o) {
			t.Errorf("%s delivered offset %d again, acked on the old leader %s", next, o, gc.old)
		}
	}
	for _, o := range unacked {
		if !slices.Contains(got, o) {
			t.Errorf("%s did not deliver offset %d, unacked on the old leader %s", next, o, gc.old)
		}
	}
	t.Logf("%s led, acked %v; %s delivered %v", gc.old, acked, next, got)
}

// A group on a stream of replication factor 3 gives up on two records on
// its leader, one rejected and one nacked past MaxDeliveries; once the
// followers hold the group's logs the leader stops, and the promoted
// leader lists both dead letters, does not deliver them, and redelivers
// them on an operator's redrive.
func TestADeadLetterSurvivesALeaderFailover(t *testing.T) {
	gc := startGroupCluster(t, group.Options{MaxDeliveries: 1})
	recs := gc.pollAll("g")
	rejected, nacked, acked := recs[0], recs[1], recs[2:]
	gc.onLeader(func(m *group.Manager) error { return m.Reject(gc.key("g"), "c1", []int64{rejected}, "unparseable") })
	gc.onLeader(func(m *group.Manager) error { return m.Nack(gc.key("g"), "c1", []int64{nacked}, 0) })
	gc.onLeader(func(m *group.Manager) error { return m.Ack(gc.key("g"), "c1", acked) })
	gc.awaitFollowersHoldTheGroupLogs(2)
	next := gc.failover()

	var dead []group.DeadLetter
	gc.onLeader(func(m *group.Manager) (err error) {
		dead, err = m.DeadLetters(gc.key("g"), 0, 10)
		return err
	})
	if len(dead) != 2 || dead[0].Offset != rejected || dead[0].Reason != group.ReasonRejected || dead[0].Detail != "c1: unparseable" ||
		dead[1].Offset != nacked || dead[1].Reason != group.ReasonNacked {
		t.Fatalf("%s lists the dead letters %+v, want %d rejected and %d nacked", next, dead, rejected, nacked)
	}
	var before, after []int64
	gc.onLeader(func(m *group.Manager) error {
		d, err := m.Poll(context.Background(), group.PollRequest{Key: gc.key("g"), Consumer: "c2", Max: 100})
		before = deliveredOffsets(d)
		return err
	})
	if slices.Contains(before, rejected) || slices.Contains(before, nacked) {
		t.Fatalf("%s delivered %v before any redrive, dead letters %d and %d among them", next, before, rejected, nacked)
	}
	gc.onLeader(func(m *group.Manager) error {
		n, err := m.Redrive(gc.key("g"), nil)
		if err == nil && n != 2 {
			err = fmt.Errorf("redrove %d dead letters, want 2", n)
		}
		return err
	})
	gc.onLeader(func(m *group.Manager) error {
		d, err := m.Poll(context.Background(), group.PollRequest{Key: gc.key("g"), Consumer: "c2", Max: 100})
		after = deliveredOffsets(d)
		return err
	})
	if !slices.Equal(after, []int64{rejected, nacked}) {
		t.Fatalf("%s delivered %v after the redrive, want the dead letters %d and %d", next, after, rejected, nacked)
	}
}

// groupCluster is three brokers and a stream of replication factor 3 at
// Quorum with ten records, and the broker leading its shard.
type groupCluster struct {
	t       *testing.T
	brokers map[string]*Broker
	id      engine.StreamID
	leader  string
	old     string // the leader that stopped
	c       *client.Client
}

func startGroupCluster(t *testing.T, groups group.Options) *groupCluster {
	s := sharedStore(t)
	gc := &groupCluster{t: t, brokers: map[string]*Broker{},
		id: engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}}
	for _, id := range []string{"a", "b", "c"} {
		cfg := clustered(id, s, Config{Groups: groups})
		cfg.Cluster.ShardLease, cfg.Cluster.PublishTimeout = replicationLease, 2*time.Second
		gc.brokers[id] = start(t, cfg)
	}
	a := gc.brokers["a"]
	waitView(t, a.View(), "a sees a, b and c", registered(a.View(), "a", "b", "c"))
	cfg := engine.StreamConfig{Shards: 1, Durable: true, ReplicationFactor: 3, Consistency: engine.ConsistencyQuorum,
		Fsync: engine.FsyncSetting{Kind: "OnCommit"}}
	if _, err := a.Engine().CreateStream(gc.id, cfg); err != nil {
		t.Fatal(err)
	}
	gc.leader = awaitReplicatedLeader(t, gc.brokers, gc.id, "")
	gc.c = dial(t, gc.brokers[gc.leader])
	for i := range 10 {
		publishUntilAcked(t, gc.c, fmt.Sprint("v", i))
	}
	return gc
}

func (gc *groupCluster) key(name string) group.Key {
	return group.Key{Stream: gc.id, Shard: 0, Group: name}
}

// onLeader runs op on the leader's groups until it is not refused as
// not-leader: each refusal waits for a publish the leader acknowledges at
// Quorum, which it does only under its lease (the leadership the groups
// ask for; the group logs of a Quorum stream lead once their followers
// answered where their logs end, which may take a few publishes more). A
// lease proof's record lands after the ten the tests poll.
func (gc *groupCluster) onLeader(op func(m *group.Manager) error) {
	gc.t.Helper()
	deadline := time.Now().Add(clusterWait)
	for try := 0; ; try++ {
		err := op(gc.brokers[gc.leader].Groups())
		var nl *engine.NotLeaderError
		switch {
		case err == nil:
			return
		case !errors.As(err, &nl) || time.Now().After(deadline):
			gc.t.Fatalf("on the leader %s (try %d): %v", gc.leader, try, err)
		}
		publishUntilAcked(gc.t, gc.c, "lease")
	}
}

// pollAll creates the group and polls the stream's ten records for
// consumer c1, returning their offsets.
func (gc *groupCluster) pollAll(name string) []int64 {
	gc.t.Helper()
	var out []int64
	gc.onLeader(func(m *group.Manager) error {
		d, err := m.Poll(context.Background(), group.PollRequest{Key: gc.key(name), Consumer: "c1", Max: 10})
		out = deliveredOffsets(d)
		return err
	})
	if len(out) != 10 {
		gc.t.Fatalf("the first poll of %s got offsets %v, want the ten records published", name, out)
	}
	return out
}

func deliveredOffsets(ds []group.Delivery) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.Offset
	}
	return out
}

// awaitFollowersHoldTheGroupLogs waits until both followers' group logs
// reach where the leader's end, once the leader's hold what it appended:
// a group created last is durable when Create returns, with every cursor
// record before it, and the dead-letter log holds dead records (its
// records, from offset 0, are the dead letters the test made).
func (gc *groupCluster) awaitFollowersHoldTheGroupLogs(dead int64) {
	gc.t.Helper()
	gc.onLeader(func(m *group.Manager) error {
		return m.Create(gc.key("marker"), engine.StartLatest, 0)
	})
	leader := gc.brokers[gc.leader]
	awaitGroupLogs(gc.t, leader, gc.id, 0, dead)
	cursors, dead, _, err := leader.Groups().LogEnds(gc.id, 0)
	if err != nil {
		gc.t.Fatal(err)
	}
	for bid, b := range gc.brokers {
		if bid != gc.leader {
			awaitGroupLogs(gc.t, b, gc.id, cursors, dead)
		}
	}
}

// awaitGroupLogs waits until b holds the group logs of shard 0 of id up
// to cursors and dead, looking again at each of its reconcile rounds (the
// one that holds them) and each time its logs make records visible.
func awaitGroupLogs(t *testing.T, b *Broker, id engine.StreamID, cursors, dead int64) {
	t.Helper()
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		round := b.node.loop.roundEnded()
		c, d, changed, err := b.Groups().LogEnds(id, 0)
		if err == nil && c >= cursors && d >= dead {
			return
		}
		select {
		case <-round:
		case <-changed: // nil until the logs are open: never ready
		case <-deadline.C:
			t.Fatalf("a follower's group logs end at %d and %d (%v), want %d and %d, within %v", c, d, err, cursors, dead, clusterWait)
		}
	}
}

// failover stops the leader and waits for another broker to lead the
// shard and acknowledge a publish, which it does only once it serves at
// its new generation; it returns that broker.
func (gc *groupCluster) failover() string {
	gc.t.Helper()
	gc.old = gc.leader
	stop(gc.t, gc.brokers[gc.old])
	delete(gc.brokers, gc.old)
	gc.leader = awaitReplicatedLeader(gc.t, gc.brokers, gc.id, gc.old)
	gc.c = dial(gc.t, gc.brokers[gc.leader])
	publishUntilAcked(gc.t, gc.c, "after")
	return gc.leader
}
