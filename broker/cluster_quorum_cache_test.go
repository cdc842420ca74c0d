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
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio/wire"
)

// Caches and groups at Quorum (engine/cache/quorum.go, engine/group/quorum.go):
// a write is acknowledged once a majority of the replica set holds it, so
// one acknowledged right before its leader dies survives whichever replica
// is promoted; without a majority it is refused no_quorum. A Leader cache
// acknowledges as it did, once its leader holds the write.

// A Quorum cache's put with both followers stopped is refused no_quorum
// after the publish timeout, and the refused value is not read back at the
// leader (it cannot vouch for it). A Leader cache's put in the same place
// is acknowledged and read back.
func TestAQuorumCachePutWithBothFollowersCutOffIsRefused(t *testing.T) {
	cc := startCacheClusterAt(t, engine.ConsistencyQuorum)
	cc.put("k", "v1")
	cc.stopFollowers()
	err := cc.writeOnce(func(c *cache.Cache) error {
		_, err := c.Put([]byte("k"), []byte("v2"), cache.PutOptions{})
		return err
	})
	if !errors.Is(err, wire.CodeNoQuorum) {
		t.Fatalf("a Quorum put with both followers stopped: %v, want no_quorum", err)
	}
	c, err := cc.brokers[cc.owner].Caches().Cache(cc.id)
	if err != nil {
		t.Fatal(err)
	}
	// It waits for v2 to commit, and ends once its wait passes the publish
	// timeout (no_quorum) or the owner's lease lapses (not_leader: the
	// control plane may have stopped with a follower).
	if item, err := c.Get([]byte("k"), nil); !errors.Is(err, wire.CodeNoQuorum) && !errors.Is(err, engine.ErrNotLeader) {
		t.Fatalf("a get at the leader of the key the refused put wrote: %+v %q %v, want no_quorum or not_leader (neither v1 nor v2 can be vouched for)",
			item, item.Value, err)
	}
}

func TestALeaderCachePutWithBothFollowersCutOffIsAcknowledged(t *testing.T) {
	cc := startCacheClusterAt(t, engine.ConsistencyLeader)
	cc.put("k", "v1")
	cc.stopFollowers()
	if err := cc.writeOnce(func(c *cache.Cache) error {
		_, err := c.Put([]byte("k"), []byte("v2"), cache.PutOptions{})
		return err
	}); err != nil {
		t.Fatalf("a Leader put with both followers stopped: %v, want it acknowledged by the leader", err)
	}
	c, err := cc.brokers[cc.owner].Caches().Cache(cc.id)
	if err != nil {
		t.Fatal(err)
	}
	if item, err := c.Get([]byte("k"), nil); err != nil || string(item.Value) != "v2" {
		t.Fatalf("a get at the leader: %+v %v, want v2", item, err)
	}
}

// #527's interleaving on a cache: one follower is stopped, a put and a
// counter add are acknowledged at Quorum (the owner and the other
// follower hold them), and the owner stops right after, before anything
// else is shipped; the stopped follower, which never got them, comes back.
// Whichever of the two is promoted serves the value and the sum.
func TestAQuorumAcknowledgedCacheValueSurvivesItsOwnerDyingRightAfterTheAck(t *testing.T) {
	cc := startCacheClusterAt(t, engine.ConsistencyQuorum)
	cc.put("warm", "x")
	cc.add([]byte("n"), 1)
	cc.awaitFollowersHoldTheLogs()
	lagging := cc.stopOneFollower()
	cc.put("k", "v")
	if v := cc.add([]byte("n"), 41); v.Sum != 42 {
		t.Fatalf("the add answered %+v, want a sum of 42", v)
	}
	next := cc.failoverTo(lagging)
	if item, err := cc.values.Get(testCtx(t), []byte("k")); err != nil || string(item.Value) != "v" {
		t.Fatalf("k on %s once %s stopped (%s, which never got it, back): %+v %v, want v", next, cc.old, lagging, item, err)
	}
	if v, err := cc.values.Counter("n").Get(testCtx(t)); err != nil || v.Sum != 42 {
		t.Fatalf("the counter on %s once %s stopped: %+v %v, want 42", next, cc.old, v, err)
	}
}

// The same with only a counter add acknowledged while a follower was
// stopped: the values logs of the two replicas left tie, so the promotion
// may choose the one without the add, which must take it from the other
// before its counters lead.
func TestAQuorumAcknowledgedCounterAddSurvivesItsOwnerDyingRightAfterTheAck(t *testing.T) {
	cc := startCacheClusterAt(t, engine.ConsistencyQuorum)
	cc.put("warm", "x")
	cc.add([]byte("n"), 1)
	cc.awaitFollowersHoldTheLogs()
	lagging := cc.stopOneFollower()
	if v := cc.add([]byte("n"), 41); v.Sum != 42 {
		t.Fatalf("the add answered %+v, want a sum of 42", v)
	}
	next := cc.failoverTo(lagging)
	if v, err := cc.values.Counter("n").Get(testCtx(t)); err != nil || v.Sum != 42 {
		t.Fatalf("the counter on %s once %s stopped (%s, which never got the add, back): %+v %v, want 42", next, cc.old, lagging, v, err)
	}
	t.Logf("%s owned the cache, %s was stopped during the add, %s owns it after", cc.old, lagging, next)
}

// A group's ack on a Quorum stream, acknowledged with one follower
// stopped, survives its leader stopping right after: the acked records are
// not delivered again by whichever replica is promoted.
func TestAQuorumGroupAckSurvivesItsLeaderDyingRightAfterTheAck(t *testing.T) {
	gc, cfgs := startGroupClusterWithConfigs(t)
	recs := gc.pollAll("g")
	gc.awaitFollowersHoldTheGroupLogs(0)
	lagging := ""
	for bid := range gc.brokers {
		if bid != gc.leader {
			lagging = bid
			break
		}
	}
	stop(t, gc.brokers[lagging])
	delete(gc.brokers, lagging)
	acked := recs[:7]
	gc.onLeader(func(m *group.Manager) error { return m.Ack(gc.key("g"), "c1", acked) })
	gc.old = gc.leader
	stop(t, gc.brokers[gc.old])
	delete(gc.brokers, gc.old)
	gc.brokers[lagging] = start(t, cfgs[lagging])
	gc.leader = awaitReplicatedLeader(t, gc.brokers, gc.id, gc.old)
	gc.c = dial(t, gc.brokers[gc.leader])
	publishUntilAcked(t, gc.c, "after")
	var got []int64
	gc.onLeader(func(m *group.Manager) error {
		d, err := m.Poll(context.Background(), group.PollRequest{Key: gc.key("g"), Consumer: "c2", Max: 100})
		got = deliveredOffsets(d)
		return err
	})
	for _, o := range acked {
		if slices.Contains(got, o) {
			t.Errorf("%s delivered offset %d again, acked at Quorum on %s while %s was stopped", gc.leader, o, gc.old, lagging)
		}
	}
	for _, o := range recs[7:] {
		if !slices.Contains(got, o) {
			t.Errorf("%s did not deliver offset %d, never acked", gc.leader, o)
		}
	}
}

// startCacheClusterAt is startCacheCluster with the cache at consistency
// cons, its brokers' configurations kept for a restart on the same disk.
func startCacheClusterAt(t *testing.T, cons engine.Consistency) *quorumCacheCluster {
	s := sharedStore(t)
	qc := &quorumCacheCluster{cacheCluster: &cacheCluster{t: t, brokers: map[string]*Broker{},
		id: cache.ID{Tenant: "t", Namespace: "n", Name: "kv"}}, cfgs: map[string]Config{}}
	cc := qc.cacheCluster
	var seeds []string
	for _, id := range []string{"a", "b", "c"} {
		cfg := clustered(id, s, Config{DataDir: t.TempDir()}) // on disk: its disk id survives a restart
		cfg.Cluster.ShardLease, cfg.Cluster.PublishTimeout = replicationLease, 2*time.Second
		qc.cfgs[id] = cfg
		b := start(t, cfg)
		cc.brokers[id] = b
		seeds = append(seeds, b.Addr().String())
	}
	a := cc.brokers["a"]
	waitView(t, a.View(), "a sees a, b and c", registered(a.View(), "a", "b", "c"))
	cfg := cache.Config{Shards: 1, Durable: true, ReplicationFactor: 3, Fsync: engine.FsyncSetting{Kind: "OnCommit"}, Consistency: cons}
	cc.openCache(t, a, seeds, cfg)
	return qc
}

// quorumCacheCluster is a cacheCluster whose brokers may be restarted.
type quorumCacheCluster struct {
	*cacheCluster
	cfgs map[string]Config
}

// stopFollowers stops both brokers other than the owner.
func (qc *quorumCacheCluster) stopFollowers() {
	for bid, b := range qc.brokers {
		if bid != qc.owner {
			stop(qc.t, b)
			delete(qc.brokers, bid)
		}
	}
}

// stopOneFollower stops one broker other than the owner and returns it.
func (qc *quorumCacheCluster) stopOneFollower() string {
	for bid, b := range qc.brokers {
		if bid != qc.owner {
			stop(qc.t, b)
			delete(qc.brokers, bid)
			return bid
		}
	}
	qc.t.Fatal("no follower to stop")
	return ""
}

// failoverTo stops the owner and starts back (on its disk) the follower
// stopped before, and waits for a new owner; it returns it.
func (qc *quorumCacheCluster) failoverTo(restart string) string {
	qc.t.Helper()
	qc.old = qc.owner
	stop(qc.t, qc.brokers[qc.old])
	delete(qc.brokers, qc.old)
	qc.brokers[restart] = start(qc.t, qc.cfgs[restart])
	for _, b := range qc.brokers {
		qc.owner = qc.awaitOwner(b, qc.old)
		break
	}
	return qc.owner
}

// writeOnce runs op on the owner's cache, again only while it is refused
// as not the leader (the owner has no lease yet, or not any more: a
// control plane that stopped with a follower is replaced), and returns its
// answer.
func (qc *quorumCacheCluster) writeOnce(op func(c *cache.Cache) error) error {
	qc.t.Helper()
	deadline := time.Now().Add(clusterWait)
	for {
		c, err := qc.brokers[qc.owner].Caches().Cache(qc.id)
		if err == nil {
			err = op(c)
		}
		if !errors.Is(err, engine.ErrNotLeader) || time.Now().After(deadline) {
			return err
		}
		if _, err := qc.values.Get(testCtx(qc.t), []byte("lease")); err != nil && !errors.Is(err, client.ErrNotLeader) {
			qc.t.Fatalf("a read while the owner %s refuses writes: %v", qc.owner, err)
		}
	}
}

// startGroupClusterWithConfigs is startGroupCluster, its brokers'
// configurations returned for a restart on the same disk.
func startGroupClusterWithConfigs(t *testing.T) (*groupCluster, map[string]Config) {
	s := sharedStore(t)
	gc := &groupCluster{t: t, brokers: map[string]*Broker{},
		id: engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}}
	cfgs := map[string]Config{}
	for _, id := range []string{"a", "b", "c"} {
		cfg := clustered(id, s, Config{DataDir: t.TempDir()}) // on disk: its disk id survives a restart
		cfg.Cluster.ShardLease, cfg.Cluster.PublishTimeout = replicationLease, 2*time.Second
		cfgs[id] = cfg
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
	return gc, cfgs
}
