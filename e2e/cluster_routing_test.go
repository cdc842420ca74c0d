package e2e

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
)

// clusterStream creates a stream named after the test through nd and
// waits until every broker has opened what it holds of it.
func clusterStream(t *testing.T, c *testCluster, nd *node, cfg client.StreamConfig) client.Stream {
	t.Helper()
	s := client.Stream{Tenant: "acme", Namespace: "e2e", Name: "s" + sanitize(t.Name())}
	if _, err := nd.dial(t).CreateStream(testCtx(t), s, cfg); err != nil {
		t.Fatal(err)
	}
	c.waitStream(s, cfg.Shards)
	return s
}

// A stream of six shards over three brokers: each broker leads two, each
// shard is held by exactly one broker, and only that broker has its
// directory. Keyed records published through one broker land, each on the
// shard its key chooses, at that shard's leader.
func TestAShardedStreamIsPlacedAcrossBrokers(t *testing.T) {
	const shards, perShard = 6, 5
	c := startCluster(t, 3, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: shards})
	id := streamID(s)
	leads := map[string][]string{}
	for i := range shards {
		l := c.leader(id, i)
		leads[l.id] = append(leads[l.id], fmt.Sprintf("shard-%04d", i))
		for _, nd := range c.brokers {
			if held := nd.eng.Stream; nd == l {
				st, err := held(id)
				if err != nil || !st.Held(i) {
					t.Fatalf("shard %d: its leader %s has not opened it (%v)", i, nd.id, err)
				}
			} else if nd.view().Holds(id, i) {
				t.Fatalf("shard %d is held by %s and by its leader %s", i, nd.id, l.id)
			}
		}
	}
	for _, nd := range c.brokers {
		if got := shardDirs(t, nd, id); len(leads[nd.id]) != 2 || !slices.Equal(got, leads[nd.id]) {
			t.Fatalf("%s leads %v and has the shard directories %v; want two each, the ones it leads", nd.id, leads[nd.id], got)
		}
	}

	recs := make([]client.Record, 0, shards*perShard)
	for i := range shards {
		for j := range perShard {
			recs = append(recs, client.Record{Key: keyFor(fmt.Sprintf("k%d-%d", i, j), i, shards), Value: fmt.Appendf(nil, "%d/%d", i, j)})
		}
	}
	runs, err := c.brokers[0].dial(t).PublishBatch(testCtx(t), s, recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != shards {
		t.Fatalf("%d ack runs for a batch spanning %d shards: %+v", len(runs), shards, runs)
	}
	for i := range shards {
		evs := readShard(t, c.leader(id, i), s, i, perShard)
		for j, ev := range evs {
			if want := fmt.Sprintf("%d/%d", i, j); string(ev.Value) != want || engine.ShardFor(ev.Key, shards) != i {
				t.Fatalf("shard %d offset %d holds %q (key %q), want %q", i, ev.Offset, ev.Value, ev.Key, want)
			}
		}
	}
}

// A publish sent to a broker that does not lead the shard is forwarded and
// acknowledged once the leader holds it; when the leader cannot be reached
// nothing is acknowledged.
func TestAPublishToANonOwnerIsStillForwarded(t *testing.T) {
	c := startCluster(t, 2, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: 1})
	id := streamID(s)
	leader, other := c.leader(id, 0), c.other(id, 0)
	cl := other.dial(t)
	for i := range 3 {
		pos, err := cl.Publish(testCtx(t), s, fmt.Appendf(nil, "v%d", i))
		if err != nil {
			t.Fatalf("publish %d through %s: %v", i, other.id, err)
		}
		if pos.Shard != 0 || pos.Offset != int64(i) {
			t.Fatalf("publish %d acknowledged at %+v, want shard 0 offset %d", i, pos, i)
		}
		st, _ := leader.eng.Stream(id)
		sh, _ := st.Shard(0)
		if sh.End() != int64(i+1) {
			t.Fatalf("acknowledged at offset %d while the leader holds %d records", pos.Offset, sh.End())
		}
	}
	if dirs := shardDirs(t, other, id); len(dirs) != 0 {
		t.Fatalf("the broker that forwarded holds %v of the stream", dirs)
	}
	if evs := readShard(t, leader, s, 0, 3); string(evs[2].Value) != "v2" {
		t.Fatalf("the leader's shard: %q", evs[2].Value)
	}

	leader.stop(t)
	c.waitView(other, "the leader's registration gone", func() bool { return len(other.view().Status().Brokers) == 1 })
	if pos, err := cl.Publish(testCtx(t), s, []byte("lost?")); err == nil {
		t.Fatalf("a publish acknowledged at %+v with its leader stopped", pos)
	}
}

// A keyed batch sent to a broker that leads one of its shards lands the
// local part there and forwards the others, each to its shard's leader,
// with one ack run per shard in shard order.
func TestAKeyedPublishIsForwardedToTheShardsOwner(t *testing.T) {
	const shards = 3
	c := startCluster(t, 3, nil)
	s := clusterStream(t, c, c.brokers[1], client.StreamConfig{Shards: shards})
	id := streamID(s)
	ingress := c.leader(id, 1)
	var recs []client.Record
	for j := range 4 {
		for i := range shards {
			recs = append(recs, client.Record{Key: keyFor(fmt.Sprintf("u%d", j), i, shards), Value: fmt.Appendf(nil, "%d:%d", i, j)})
		}
	}
	runs, err := ingress.dial(t).PublishBatch(testCtx(t), s, recs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		if int(r.Shard) != i || r.Count != 4 || r.FirstOffset != 0 {
			t.Fatalf("ack runs %+v: want one per shard in shard order, 4 records each from offset 0", runs)
		}
	}
	if len(runs) != shards {
		t.Fatalf("ack runs %+v", runs)
	}
	for i := range shards {
		for j, ev := range readShard(t, c.leader(id, i), s, i, 4) {
			if want := fmt.Sprintf("%d:%d", i, j); string(ev.Value) != want {
				t.Fatalf("shard %d offset %d: %q, want %q", i, ev.Offset, ev.Value, want)
			}
		}
	}
}

// A subscribe sent to a broker that does not lead the shard is refused
// with not_leader naming the leader's client address; it is never served
// there (which would look like a stream with no traffic). A group poll
// and a cache watch are redirected alike.
func TestASubscribeToANonOwnerIsRedirected(t *testing.T) {
	c := startCluster(t, 2, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: 1})
	id := streamID(s)
	leader, other := c.leader(id, 0), c.other(id, 0)
	cl := other.dial(t)
	_, err := cl.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	wantRedirect(t, "subscribe", err, leader)
	_, err = cl.Group(s, 0, "g").Poll(testCtx(t), 1, 0)
	wantRedirect(t, "group poll", err, leader)

	ca := createClusterCache(t, c, other, 1)
	owner := c.leader(cacheOwnership(ca), 0)
	away := c.other(cacheOwnership(ca), 0)
	_, err = away.dial(t).Cache(client.CacheName{Tenant: ca.Tenant, Namespace: ca.Namespace, Name: ca.Name}).Watch(testCtx(t), []byte("k"))
	wantRedirect(t, "cache watch", err, owner)
}

func wantRedirect(t *testing.T, what string, err error, leader *node) {
	t.Helper()
	if !errors.Is(err, client.ErrNotLeader) {
		t.Fatalf("%s at a broker that does not lead the shard: %v, want not_leader", what, err)
	}
	if se := serverError(t, err); se.Details.LeaderAddr != leader.addr() {
		t.Fatalf("%s redirected to %q, want the leader's address %q", what, se.Details.LeaderAddr, leader.addr())
	}
}
