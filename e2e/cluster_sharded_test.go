package e2e

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
)

// A sharded subscription over a stream of six shards led by three brokers
// receives every record published to it, each with the shard its key
// chose and that shard's offsets in order from 0.
func TestAShardedSubscriptionReceivesEveryRecord(t *testing.T) {
	const shards, perShard = 6, 5
	c := startCluster(t, 3, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: shards})
	cc := dialCluster(t, []string{c.brokers[2].addr()})
	sub, err := cc.SubscribeSharded(testCtx(t), s, client.ShardedOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for j := range perShard {
		for i := range shards {
			if _, err := cc.Publish(testCtx(t), s, fmt.Appendf(nil, "%d/%d", i, j), client.WithKey(keyFor(fmt.Sprint("k", i, j), i, shards))); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := map[int]int64{}
	for range shards * perShard {
		ev, err := sub.Next(testCtx(t))
		if err != nil {
			t.Fatalf("after %v: %v", next, err)
		}
		want := fmt.Sprintf("%d/%d", ev.Shard, ev.Offset)
		if ev.Offset != next[ev.Shard] || string(ev.Value) != want || engine.ShardFor(ev.Key, shards) != ev.Shard {
			t.Fatalf("shard %d offset %d holds %q (key %q); want offset %d holding %q", ev.Shard, ev.Offset, ev.Value, ev.Key, next[ev.Shard], want)
		}
		next[ev.Shard]++
	}
	for i := range shards {
		if next[i] != perShard {
			t.Fatalf("per shard: %v, want %d each", next, perShard)
		}
	}
}

// A shard whose only broker is stopped refuses the whole subscription,
// naming the shard, rather than reading the shards that are left.
func TestAnUnreachableShardRefusesTheSubscription(t *testing.T) {
	const shards = 3
	c := startCluster(t, 3, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: shards})
	id := streamID(s)
	var gone *node
	var lost []int
	for i := range shards {
		if l := c.leader(id, i); l != c.brokers[0] && (gone == nil || l == gone) {
			gone, lost = l, append(lost, i)
		}
	}
	if gone == nil || len(lost) == shards {
		t.Fatalf("no broker but the seed leads a shard, or one leads all: the placement is not spread")
	}
	cc := dialCluster(t, []string{c.brokers[0].addr()},
		client.WithRetryPolicy(client.RetryPolicy{Attempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}))
	gone.stop(t)
	_, err := cc.SubscribeSharded(testCtx(t), s, client.ShardedOptions{Start: client.FromEarliest()})
	var se *client.ShardError
	if !errors.As(err, &se) || !slices.Contains(lost, se.Shard) {
		t.Fatalf("subscribing with shards %v unreachable: %v, want a *ShardError naming one of them", lost, err)
	}
}

// A sharded subscription's offsets, one per shard, resume it where it
// stopped: every record is read once across the two subscriptions, none
// skipped and none twice, though the first stopped part way through some
// shards and before others.
func TestAShardedSubscriptionResumesFromItsPerShardOffsets(t *testing.T) {
	const shards, perShard, firstRead = 4, 5, 7
	c := startCluster(t, 2, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: shards})
	cc := dialCluster(t, addrs(c.brokers...))
	publish := func(round int) {
		for i := range shards {
			for j := range perShard {
				if _, err := cc.Publish(testCtx(t), s, fmt.Appendf(nil, "%d:%d/%d", round, i, j), client.WithKey(keyFor(fmt.Sprint("k", i), i, shards))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	publish(0)
	seen := map[string]int{}
	sub, err := cc.SubscribeSharded(testCtx(t), s, client.ShardedOptions{Start: client.FromEarliest(), Buffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range firstRead {
		ev, err := sub.Next(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		seen[string(ev.Value)]++
	}
	offsets := sub.Offsets()
	_ = sub.Close()
	if len(offsets) != shards {
		t.Fatalf("offsets %v: want one per shard", offsets)
	}
	publish(1)
	sub, err = cc.SubscribeSharded(testCtx(t), s, client.ShardedOptions{From: offsets})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for range 2*shards*perShard - firstRead {
		ev, err := sub.Next(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		seen[string(ev.Value)]++
	}
	for r := range 2 {
		for i := range shards {
			for j := range perShard {
				if v := fmt.Sprintf("%d:%d/%d", r, i, j); seen[v] != 1 {
					t.Fatalf("%q read %d times across the resume from %v", v, seen[v], offsets)
				}
			}
		}
	}
}

// A sharded subscription over replicated shards keeps delivering the
// shards whose leader lives while one shard fails over, and re-establishes
// that one at its promoted replica from where it stopped: the cluster
// client's side of one_shard_failing_over_does_not_stop_the_others.
func TestOneShardFailingOverDoesNotStopAShardedSubscription(t *testing.T) {
	const shards = 3
	c := startLeasedCluster(t, 3)
	cc := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	s := replicatedStream(t, cc, shards)
	sub, err := cc.SubscribeSharded(testCtx(t), s, client.ShardedOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for range shards {
		if _, err := sub.Next(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	old := leaderOf(t, c, cc, s, 0)
	live := -1
	for i := 1; i < shards; i++ {
		if leaderOf(t, c, cc, s, i) != old {
			live = i
		}
	}
	if live < 0 {
		t.Fatalf("%s leads every shard: no shard to keep delivering", old.id)
	}
	old.stop(t)
	if _, err := cc.PublishAtLeastOnce(testCtx(t), s, []byte("live"), client.WithKey(keyFor("ready", live, shards))); err != nil {
		t.Fatal(err)
	}
	ev, err := sub.Next(testCtx(t))
	if err != nil || string(ev.Value) != "live" {
		t.Fatalf("the live shard %d: %+v %v", live, ev, err)
	}
	if n := sub.Stats().Reopened[0]; n != 0 {
		t.Fatalf("shard 0 was re-established (%d) before the live shard delivered: nothing shows the others kept on", n)
	}
	if _, err := cc.PublishAtLeastOnce(testCtx(t), s, []byte("moved"), client.WithKey(keyFor("ready", 0, shards))); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := sub.Next(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Shard == 0 && string(ev.Value) == "moved" {
			break
		}
	}
	if st := sub.Stats(); st.Reopened[0] == 0 {
		t.Fatalf("shard 0 delivered after its leader stopped without being re-established: %+v", st)
	}
}
