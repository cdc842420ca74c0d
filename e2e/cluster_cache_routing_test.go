package e2e

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine/cache"
)

// relayed counts the forwarded requests nd has served: a request that
// reached it through another broker rather than directly.
func relayed(nd *node) uint64 { return nd.b.Server().Metrics().RelayRequests.Load() }

func clientCacheName(id cache.ID) client.CacheName {
	return client.CacheName{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}
}

// A cluster client given only a broker that does not own a key sends the
// key's gets, puts and counter operations to the owner itself: the owner
// serves none of them as a forwarded request, where a plain client of the
// other broker's is forwarded.
func TestAClusterCacheSendsAKeyToItsOwner(t *testing.T) {
	const shards = 3
	c := startCluster(t, 3, nil)
	id := createClusterCache(t, c, c.brokers[0], shards)
	ctx := testCtx(t)
	for shard := range shards {
		owner := c.leader(cacheOwnership(id), shard)
		away := c.other(cacheOwnership(id), shard)
		cc := dialCluster(t, []string{away.addr()})
		ca := cc.Cache(clientCacheName(id))
		key := keyFor("routed", shard, shards)
		before := relayed(owner)
		for i := range 5 {
			if _, err := ca.Put(ctx, key, fmt.Appendf(nil, "v%d", i)); err != nil {
				t.Fatalf("shard %d: put %d through %s: %v", shard, i, away.id, err)
			}
			if it, err := ca.Get(ctx, key); err != nil || string(it.Value) != fmt.Sprint("v", i) {
				t.Fatalf("shard %d: get %d: %+v %v", shard, i, it, err)
			}
			if _, err := ca.Counter(string(key)).Add(ctx, 1); err != nil {
				t.Fatalf("shard %d: counter add %d: %v", shard, i, err)
			}
		}
		if v, err := ca.Counter(string(key)).Get(ctx); err != nil || v.Sum != 5 {
			t.Fatalf("shard %d: counter %+v %v, want 5", shard, v, err)
		}
		if n := relayed(owner) - before; n != 0 {
			t.Fatalf("shard %d: the owner %s served %d of the cluster client's requests forwarded by another broker, want none",
				shard, owner.id, n)
		}
		if _, err := away.dial(t).Cache(clientCacheName(id)).Get(ctx, key); err != nil {
			t.Fatal(err)
		}
		if n := relayed(owner) - before; n != 1 {
			t.Fatalf("shard %d: a plain client of %s: the owner served %d forwarded requests, want 1", shard, away.id, n)
		}
	}
}

// After the owner of a cache replicated three ways stops, a cluster
// client whose broker holds no replica of it (four brokers, three
// replicas: that broker never owns the shard) finds the broker that took
// the shard over and sends the key there directly, reading what was
// written before the failover.
func TestAClusterCacheFindsTheNewOwnerAfterAFailover(t *testing.T) {
	c := startLeasedCluster(t, 4)
	admin := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	id := cache.ID{Tenant: "acme", Namespace: "e2e", Name: "c" + sanitize(t.Name())}
	err := admin.Cache(clientCacheName(id)).Create(testCtx(t),
		client.CacheConfig{Shards: 1, ReplicationFactor: 3, Fsync: client.Fsync{Kind: client.FsyncOnCommit}})
	if err != nil {
		t.Fatal(err)
	}
	running := c.brokers
	awaitCacheOwner(t, c, running, id)
	info, err := admin.Cache(clientCacheName(id)).Describe(testCtx(t))
	if err != nil || len(info.Shards) != 1 || len(info.Shards[0].Replicas) != 3 {
		t.Fatalf("describe: %+v %v, want one shard on three replicas", info, err)
	}
	outside := notIn(c.brokers, info.Shards[0].Replicas)
	cc := dialCluster(t, []string{outside.addr()}, client.WithRetryPolicy(failoverPolicy))
	ca := cc.Cache(clientCacheName(id))
	key := []byte("k")
	putOnce(t, ca, key, "before")
	old := c.leader(cacheOwnership(id), 0)
	awaitFollowersHold(t, old, replicasOf(c.brokers, info.Shards[0].Replicas, old), id)
	old.stop(t)
	running = without(c.brokers, old)
	owner := awaitCacheOwner(t, c, running, id)

	if it, err := ca.Get(testCtx(t), key); err != nil || string(it.Value) != "before" {
		t.Fatalf("the first get after the failover: %+v %v, want the value written before it", it, err)
	}
	before := relayed(owner)
	for i := range 5 {
		putOnce(t, ca, key, fmt.Sprint("after-", i))
		if it, err := ca.Get(testCtx(t), key); err != nil || string(it.Value) != fmt.Sprint("after-", i) {
			t.Fatalf("get %d after the failover: %+v %v", i, it, err)
		}
	}
	if n := relayed(owner) - before; n != 0 {
		t.Fatalf("the new owner %s served %d of the cluster client's requests forwarded by %s, want none: it was not found",
			owner.id, n, outside.id)
	}
}

// notIn is the first of nodes whose id is not among ids.
func notIn(nodes []*node, ids []string) *node {
	for _, nd := range nodes {
		if !slices.Contains(ids, nd.id) {
			return nd
		}
	}
	panic("every node is among the ids")
}

// replicasOf are the nodes whose ids are among ids, but not except.
func replicasOf(nodes []*node, ids []string, except *node) []*node {
	var out []*node
	for _, nd := range nodes {
		if nd != except && slices.Contains(ids, nd.id) {
			out = append(out, nd)
		}
	}
	return out
}

// awaitCacheOwner waits until every broker of running has opened the
// cache's one shard where it holds it and names one of running as its
// owner, and returns that owner.
func awaitCacheOwner(t *testing.T, c *testCluster, running []*node, id cache.ID) *node {
	t.Helper()
	var owner *node
	for _, nd := range running {
		c.waitRound(nd, "cache "+id.String()+" owned by a running broker", func() bool {
			ca, err := nd.b.Caches().Cache(id)
			if err != nil {
				return false
			}
			stats := ca.Stats()
			if !placedHere(nd, id.OwnershipID(), 1, func(i int) bool { return stats[i].Open }) {
				return false
			}
			owner = ownerAmong(nd, running, id)
			return owner != nil
		})
	}
	return owner
}

// ownerAmong is the broker of running nd's view names as the owner of the
// cache's shard, or nil.
func ownerAmong(nd *node, running []*node, id cache.ID) *node {
	if local, _ := nd.view().Leader(id.OwnershipID(), 0); local {
		return nd
	}
	b, ok := nd.view().LeaderBroker(id.OwnershipID(), 0)
	for _, r := range running {
		if ok && r.id == b {
			return r
		}
	}
	return nil
}

// awaitFollowersHold waits until the logs of the cache's shard on each
// of followers reach where the owner's end, so that the failover keeps
// what was written, looking again after each reconcile round and each
// time a follower's logs make records visible.
func awaitFollowersHold(t *testing.T, owner *node, followers []*node, id cache.ID) {
	t.Helper()
	oc, err := owner.b.Caches().Cache(id)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := oc.LogEnds(0)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for _, nd := range followers {
		for {
			round := nd.b.Reconciled()
			var got cache.LogEnds
			var moved <-chan struct{}
			fc, err := nd.b.Caches().Cache(id)
			if err == nil {
				got, moved, err = fc.LogEnds(0)
			}
			if err == nil && got.Values >= want.Values && got.Counters >= want.Counters {
				break
			}
			select {
			case <-round:
			case <-moved: // nil until the shard is open
			case <-deadline.C:
				t.Fatalf("%s: the cache's logs end at %+v (%v), want %+v, within %v", nd.id, got, err, want, clusterWait)
			}
		}
	}
}

func without(nodes []*node, gone *node) []*node {
	var out []*node
	for _, nd := range nodes {
		if nd != gone {
			out = append(out, nd)
		}
	}
	return out
}

// putOnce puts value under key through ca. A put is never resent, so one
// refused because the shard's fresh leader has no lease yet is tried
// again after a get, which the client retries until the leader serves.
func putOnce(t *testing.T, ca *client.ClusterCache, key []byte, value string) {
	t.Helper()
	for try := 0; ; try++ {
		_, err := ca.Put(testCtx(t), key, []byte(value))
		switch {
		case err == nil:
			return
		case !errors.Is(err, client.ErrNotLeader) || try == 10:
			t.Fatalf("put %q (try %d): %v", value, try, err)
		}
		if _, err := ca.Get(testCtx(t), key); err != nil {
			t.Fatalf("a get while puts are refused: %v", err)
		}
	}
}
