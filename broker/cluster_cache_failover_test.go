package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// A durable cache of replication factor 3: values put at its owner are on
// the owner's successor once the owner stops, read back through the
// cluster, and the successor takes puts.
func TestACacheValueSurvivesTheLossOfItsOwner(t *testing.T) {
	cc := startCacheCluster(t)
	want := map[string]string{}
	for i := range 5 {
		k, v := fmt.Sprint("k", i), fmt.Sprint("v", i)
		cc.put(k, v)
		want[k] = v
	}
	cc.awaitFollowersHoldTheLogs()
	next := cc.failover()
	for k, v := range want {
		if item, err := cc.values.Get(testCtx(t), []byte(k)); err != nil || !item.Found || string(item.Value) != v {
			t.Fatalf("%s after %s stopped: %+v %v, want %q", k, cc.old, item, err, v)
		}
	}
	cc.put("after", "x")
	if item, err := cc.values.Get(testCtx(t), []byte("after")); err != nil || string(item.Value) != "x" {
		t.Fatalf("a put on %s, the successor of %s: read back %+v %v", next, cc.old, item, err)
	}
}

// A retained watch of a key at the owner delivers its value and a live
// write; the owner stops and the watch ends with it. On the successor a
// retained watch is served the value from its rebuilt index and then the
// live writes, and a watch resumed from where the first one stopped (a
// client re-establishing it) gets those writes too, with no gap.
func TestARetainedWatchSurvivesTheLossOfTheOwner(t *testing.T) {
	cc := startCacheCluster(t)
	key := []byte("k")
	cc.put("k", "v1")
	w := cc.watchAtOwner(func(c *client.Cache) (*client.Watch, error) { return c.WatchRetained(testCtx(t), key) })
	wantEvent(t, w, client.WatchSnapshot, "v1")
	wantEvent(t, w, client.WatchSynced, "")
	cc.put("k", "v2")
	wantEvent(t, w, client.WatchPut, "v2")
	resume := w.ResumeOffset()
	cc.awaitFollowersHoldTheLogs()
	next := cc.failover()
	if ev, err := w.Next(testCtx(t)); err == nil {
		t.Fatalf("the watch at %s, stopped: %v %q, want its end", cc.old, ev.Kind, ev.Value)
	}

	retained := cc.watchAtOwner(func(c *client.Cache) (*client.Watch, error) { return c.WatchRetained(testCtx(t), key) })
	wantEvent(t, retained, client.WatchSnapshot, "v2")
	wantEvent(t, retained, client.WatchSynced, "")
	resumed := cc.watchAtOwner(func(c *client.Cache) (*client.Watch, error) {
		return c.Watch(testCtx(t), key, client.WithResumeAt(resume))
	})
	cc.put("k", "v3")
	wantEvent(t, retained, client.WatchPut, "v3")
	wantEvent(t, resumed, client.WatchPut, "v3")
	t.Logf("%s owned the cache, %s serves the watches after it", cc.old, next)
}

// Adds to a counter at its owner; the owner stops; the successor folds the
// true sum from its shipped log and keeps counting.
func TestACounterSurvivesTheLossOfItsOwner(t *testing.T) {
	cc := startCacheCluster(t)
	key := []byte("n")
	var sum int64
	for i := range 10 {
		delta := int64(i + 1)
		cc.add(key, delta)
		sum += delta
	}
	cc.awaitFollowersHoldTheLogs()
	next := cc.failover()
	counter := cc.values.Counter(string(key))
	if v, err := counter.Get(testCtx(t)); err != nil || !v.Exists || v.Sum != sum {
		t.Fatalf("the counter on %s once %s stopped: %+v %v, want %d", next, cc.old, v, err, sum)
	}
	if after := cc.add(key, 100); after.Sum != sum+100 {
		t.Fatalf("an add of 100 on %s answered %d, want %d", next, after.Sum, sum+100)
	}
	if v, err := counter.Get(testCtx(t)); err != nil || v.Sum != sum+100 {
		t.Fatalf("the counter on %s after its add: %+v %v, want %d", next, v, err, sum+100)
	}
}

// cacheCluster is three brokers, a durable cache of replication factor 3
// and one shard, the broker that owns (leads) it, and a cluster client.
type cacheCluster struct {
	t       *testing.T
	store   store.Store
	brokers map[string]*Broker
	id      cache.ID
	owner   string
	old     string // the owner that stopped
	values  *client.ClusterCache
}

func startCacheCluster(t *testing.T) *cacheCluster {
	s := sharedStore(t)
	cc := &cacheCluster{t: t, store: s, brokers: map[string]*Broker{}, id: cache.ID{Tenant: "t", Namespace: "n", Name: "kv"}}
	var seeds []string
	for _, id := range []string{"a", "b", "c"} {
		b := cc.startBroker(id)
		seeds = append(seeds, b.Addr().String())
	}
	a := cc.brokers["a"]
	waitView(t, a.View(), "a sees a, b and c", registered(a.View(), "a", "b", "c"))
	cfg := cache.Config{Shards: 1, Durable: true, ReplicationFactor: 3, Fsync: engine.FsyncSetting{Kind: "OnCommit"}}
	cc.openCache(t, a, seeds, cfg)
	return cc
}

// startBroker starts broker id of the cluster, on a data directory of its
// own (a new one each time).
func (cc *cacheCluster) startBroker(id string) *Broker {
	cfg := clustered(id, cc.store, Config{})
	cfg.Cluster.ShardLease, cfg.Cluster.PublishTimeout = replicationLease, 2*time.Second
	b := start(cc.t, cfg)
	cc.brokers[id] = b
	return b
}

// ownerIn is the broker v names as the owner of the cache's shard, "" when
// none.
func ownerIn(v *control.View, self string, owner engine.StreamID) string {
	if local, _ := v.Leader(owner, 0); local {
		return self
	}
	b, _ := v.LeaderBroker(owner, 0)
	return b
}

// awaitOwner waits until b's view names an owner of the shard other than
// not among the brokers running, and returns it.
func (cc *cacheCluster) awaitOwner(b *Broker, not string) string {
	cc.t.Helper()
	var owner string
	self := b.cfg.Cluster.BrokerID
	waitView(cc.t, b.View(), "the cache's shard has an owner other than "+not, func() bool {
		owner = ownerIn(b.View(), self, cc.id.OwnershipID())
		return owner != "" && owner != not && cc.brokers[owner] != nil
	})
	return owner
}

// write runs op on the owner's cache until it is not refused as not the
// leader: each refusal waits for a read the cluster client retries, under
// its backoff, until the owner serves it, which it does only under its
// lease (what the cache asks Leading for; a Quorum cache's counters lead
// once their followers answered where their logs end, which may take a
// few reads more).
func (cc *cacheCluster) write(op func(c *cache.Cache) error) {
	cc.t.Helper()
	deadline := time.Now().Add(clusterWait)
	for try := 0; ; try++ {
		c, err := cc.brokers[cc.owner].Caches().Cache(cc.id)
		if err == nil {
			err = op(c)
		}
		switch {
		case err == nil:
			return
		case !errors.Is(err, engine.ErrNotLeader) || time.Now().After(deadline):
			cc.t.Fatalf("a write at the owner %s (try %d): %v", cc.owner, try, err)
		}
		if _, err := cc.values.Get(testCtx(cc.t), []byte("lease")); err != nil {
			cc.t.Fatalf("a read while the owner %s refuses writes: %v", cc.owner, err)
		}
	}
}

// watchAtOwner opens a watch at the owner, over a connection of its own,
// until it is not refused as not the leader (each refusal waits as a
// refused write does); it is closed at the test's end.
func (cc *cacheCluster) watchAtOwner(open func(c *client.Cache) (*client.Watch, error)) *client.Watch {
	cc.t.Helper()
	c := dial(cc.t, cc.brokers[cc.owner]).Cache(client.CacheName{Tenant: cc.id.Tenant, Namespace: cc.id.Namespace, Name: cc.id.Name})
	for try := 0; ; try++ {
		w, err := open(c)
		switch {
		case err == nil:
			cc.t.Cleanup(func() { w.Close() })
			return w
		case !errors.Is(err, client.ErrNotLeader) || try == 10:
			cc.t.Fatalf("a watch at the owner %s (try %d): %v", cc.owner, try, err)
		}
		if _, err := cc.values.Get(testCtx(cc.t), []byte("lease")); err != nil {
			cc.t.Fatalf("a read while the owner %s refuses watches: %v", cc.owner, err)
		}
	}
}

// put puts value under key at the owner, as write does.
func (cc *cacheCluster) put(key, value string) {
	cc.t.Helper()
	cc.write(func(c *cache.Cache) error {
		_, err := c.Put([]byte(key), []byte(value), cache.PutOptions{})
		return err
	})
}

// add adds delta to the counter at key at the owner, as write does, and
// returns the answer.
func (cc *cacheCluster) add(key []byte, delta int64) cache.CounterValue {
	cc.t.Helper()
	var v cache.CounterValue
	cc.write(func(c *cache.Cache) (err error) {
		v, err = c.CounterAdd(key, delta)
		return err
	})
	return v
}

// awaitFollowersHoldTheLogs waits until both followers' logs of the shard
// reach where the owner's end.
func (cc *cacheCluster) awaitFollowersHoldTheLogs() {
	cc.t.Helper()
	c, err := cc.brokers[cc.owner].Caches().Cache(cc.id)
	if err != nil {
		cc.t.Fatal(err)
	}
	want, _, err := c.LogEnds(0)
	if err != nil {
		cc.t.Fatal(err)
	}
	for bid, b := range cc.brokers {
		if bid != cc.owner {
			awaitCacheLogs(cc.t, b, cc.id, want)
		}
	}
}

// awaitCacheLogs waits until b's logs of shard 0 of id reach want,
// looking again each time they make records visible.
func awaitCacheLogs(t *testing.T, b *Broker, id cache.ID, want cache.LogEnds) {
	t.Helper()
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		round := b.node.loop.roundEnded()
		var got cache.LogEnds
		var moved <-chan struct{}
		c, err := b.Caches().Cache(id)
		if err == nil {
			got, moved, err = c.LogEnds(0)
		}
		if err == nil && got.Values >= want.Values && got.Counters >= want.Counters {
			return
		}
		select {
		case <-round:
		case <-moved: // nil until the shard is open
		case <-deadline.C:
			t.Fatalf("a follower's logs end at %+v (%v), want %+v, within %v", got, err, want, clusterWait)
		}
	}
}

// failover stops the owner and waits for another broker's view to name
// an owner; it returns that broker.
func (cc *cacheCluster) failover() string {
	cc.t.Helper()
	cc.old = cc.owner
	stop(cc.t, cc.brokers[cc.old])
	delete(cc.brokers, cc.old)
	for _, b := range cc.brokers {
		cc.owner = cc.awaitOwner(b, cc.old)
		break
	}
	owner := cc.brokers[cc.owner]
	waitView(cc.t, owner.View(), cc.owner+" sees itself lead the cache's shard", func() bool {
		return ownerIn(owner.View(), cc.owner, cc.id.OwnershipID()) == cc.owner
	})
	for _, ls := range owner.View().Local() {
		if ls.Shard.Object == (cluster.ObjectID{Kind: cluster.KindCache, Tenant: cc.id.Tenant, Namespace: cc.id.Namespace, Name: cc.id.Name}) &&
			(ls.Assignment.Generation < 2 || len(ls.Assignment.Replicas) != 3) {
			cc.t.Fatalf("%s after %s stopped: %+v, want it leading at a generation above 1, one of 3 replicas", cc.owner, cc.old, ls)
		}
	}
	return cc.owner
}

// wantEvent reads w's next event and checks its kind and value.
func wantEvent(t *testing.T, w *client.Watch, kind client.WatchEventKind, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	ev, err := w.Next(ctx)
	if err != nil || ev.Kind != kind || string(ev.Value) != value {
		t.Fatalf("watch event %v %q (%v), want %v %q", ev.Kind, ev.Value, err, kind, value)
	}
}

// openCache creates cc's cache through a with cfg, waits until its shard
// is open on every broker and has an owner, and dials cc.values through
// seeds, retrying until clusterWait.
func (cc *cacheCluster) openCache(t *testing.T, a *Broker, seeds []string, cfg cache.Config) {
	t.Helper()
	if _, err := a.Caches().Create(cc.id, cfg); err != nil {
		t.Fatal(err)
	}
	for _, b := range cc.brokers {
		waitRound(t, b, "the cache's shard open on every broker", func() bool { return cacheShardOpen(b, cc.id, 0) })
	}
	cc.owner = cc.awaitOwner(a, "")
	cl, err := client.DialCluster(testCtx(t), seeds, client.WithRetryPolicy(client.RetryPolicy{Attempts: 200,
		InitialBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Deadline: clusterWait}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	cc.values = cl.Cache(client.CacheName{Tenant: cc.id.Tenant, Namespace: cc.id.Namespace, Name: cc.id.Name})
}
