package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// One consumer of a group over every shard of a stream whose shards are
// led by three brokers: it is handed every record once, each with its
// shard, and its acks, taken back to each shard's leader, move every
// shard's group to the end.
func TestAShardedGroupConsumesEveryShard(t *testing.T) {
	const shards, perShard = 3, 4
	c := startCluster(t, 3, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: shards})
	cc := dialCluster(t, []string{c.brokers[1].addr()})
	for i := range shards {
		for j := range perShard {
			if _, err := cc.Publish(testCtx(t), s, fmt.Appendf(nil, "%d/%d", i, j), client.WithKey(keyFor("k", i, shards))); err != nil {
				t.Fatal(err)
			}
		}
	}
	g, err := cc.ShardedGroup(testCtx(t), s, "workers", client.ShardedGroupOptions{Batch: 2, Wait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	seen := map[string]bool{}
	for len(seen) < shards*perShard {
		m, err := g.Next(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%d/%d", m.Shard, m.Offset); string(m.Value) != want || seen[want] {
			t.Fatalf("shard %d offset %d: %q (seen before: %v), want %q once", m.Shard, m.Offset, m.Value, seen[want], want)
		}
		seen[string(m.Value)] = true
		if err := g.Ack(testCtx(t), m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range shards {
		info, err := g.Shard(i).Describe(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if info.Cursor != perShard {
			t.Fatalf("shard %d's group: %+v, want its cursor at %d", i, info, perShard)
		}
	}
}

// A cluster client's one-shard group, reached through a broker that does
// not lead the shard, polls at the leader and acks there asynchronously.
func TestAClusterGroupPollsAndAcksAtTheLeader(t *testing.T) {
	c := startCluster(t, 2, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: 1})
	away := c.other(streamID(s), 0)
	cc := dialCluster(t, []string{away.addr()})
	for i := range 3 {
		if _, err := cc.Publish(testCtx(t), s, fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	g := cc.Group(s, 0, "one")
	ms, err := g.Poll(testCtx(t), 3, time.Second)
	if err != nil || len(ms) != 3 {
		t.Fatalf("poll: %d messages, %v", len(ms), err)
	}
	if err := g.AckAsync(testCtx(t), ms[0].Offset, ms[1].Offset, ms[2].Offset).Wait(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	info, err := g.Describe(testCtx(t))
	if err != nil || info.Cursor != 3 {
		t.Fatalf("the group after the acks: %+v %v, want its cursor at 3", info, err)
	}
	if st := cc.Stats(); st.Routes != 1 || st.PerBroker[c.leader(streamID(s), 0).addr()].Connections == 0 {
		t.Fatalf("stats %+v: want the shard's route known and a connection to its leader", st)
	}
}
