package broker

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine"
)

// A follower that comes back on a wiped data directory (a new disk id)
// takes its old replica's place again: the control plane gives the place
// to the new disk at the next generation, the leader ships it the whole
// log, and it then counts as a replica with the data. Stopping the leader
// afterwards leaves the other follower and the new disk, which together
// are enough to promote one of them with every acknowledged record.
func TestAFollowerOnAWipedDiskIsReplicatedAgain(t *testing.T) {
	s := sharedStore(t)
	configs, brokers := map[string]Config{}, map[string]*Broker{}
	for _, id := range []string{"a", "b", "c"} {
		cfg := clustered(id, s, Config{})
		cfg.Cluster.ShardLease, cfg.Cluster.PublishTimeout = replicationLease, 2*time.Second
		configs[id], brokers[id] = cfg, start(t, cfg)
	}
	waitView(t, brokers["a"].View(), "a sees a, b and c", registered(brokers["a"].View(), "a", "b", "c"))
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	if _, err := brokers["a"].Engine().CreateStream(id, engine.StreamConfig{Shards: 1, Durable: true, ReplicationFactor: 3,
		Consistency: engine.ConsistencyQuorum, Fsync: engine.FsyncSetting{Kind: "OnCommit"}}); err != nil {
		t.Fatal(err)
	}
	leader := awaitReplicatedLeader(t, brokers, id, "")
	var acked []string
	for _, v := range []string{"v0", "v1", "v2"} {
		publishUntilAcked(t, dial(t, brokers[leader]), v)
		acked = append(acked, v)
	}
	wiped := "a"
	for wiped == leader {
		wiped = string(rune(wiped[0] + 1))
	}
	oldDisk := brokers[wiped].DiskID()
	stop(t, brokers[wiped])
	cfg := configs[wiped]
	cfg.DataDir, cfg.FS = "", nil // a new, empty data directory
	brokers[wiped] = start(t, clustered(wiped, s, cfg))
	if brokers[wiped].DiskID() == oldDisk {
		t.Fatalf("a wiped data directory kept its disk id %s", oldDisk)
	}
	newReplica := cluster.Replica{Broker: wiped, DiskID: brokers[wiped].DiskID()}
	waitView(t, brokers[leader].View(), "the new disk takes the old replica's place", func() bool {
		for _, ls := range brokers[leader].View().Local() {
			if a := ls.Assignment; a.Holds(newReplica) && a.Leader != (cluster.Replica{}) && a.JoinedAt(newReplica) == a.Generation {
				return true
			}
		}
		return false
	})
	publishUntilAcked(t, dial(t, brokers[leader]), "after the replacement")
	acked = append(acked, "after the replacement")
	awaitValues(t, brokers[wiped], id, acked)

	stop(t, brokers[leader])
	delete(brokers, leader)
	next := awaitReplicatedLeader(t, brokers, id, leader)
	publishUntilAcked(t, dial(t, brokers[next]), "after the failover")
	got := committedValues(t, brokers[next], id)
	if first := firstPlaces(got); !slices.Equal(first[:min(len(first), len(acked))], acked) || !slices.Contains(got, "after the failover") {
		t.Fatalf("%s, promoted over %s and the new disk of %s, holds %v, want %v and then \"after the failover\"", next, leader, wiped, got, acked)
	}
}

// awaitValues waits until b's shard 0 of id holds want (first places, in
// order), polling: a follower's catching up has no event a test sees.
func awaitValues(t *testing.T, b *Broker, id engine.StreamID, want []string) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for {
		var got []string
		if s, err := b.Engine().Stream(id); err == nil && s.Held(0) {
			got = firstPlaces(committedValues(t, b, id))
			if len(got) >= len(want) && slices.Equal(got[:len(want)], want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %v, want %v, within %v", b.cfg.Cluster.BrokerID, got, want, clusterWait)
		}
		time.Sleep(20 * time.Millisecond) // polls a follower's catching up over TCP
	}
}

// A cache's follower back on a wiped data directory is given its place
// again and shipped the cache's values and counters: once it holds them,
// the owner can stop and the successor (the other follower or the new
// disk) serves every value and the counter's sum.
func TestACacheFollowerOnAWipedDiskIsReplicatedAgain(t *testing.T) {
	cc := startCacheCluster(t)
	for i := range 5 {
		cc.put(fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	cc.add([]byte("n"), 7)
	wiped := "a"
	for wiped == cc.owner {
		wiped = string(rune(wiped[0] + 1))
	}
	stop(t, cc.brokers[wiped])
	newDisk := cluster.Replica{Broker: wiped, DiskID: cc.startBroker(wiped).DiskID()}
	owner := cc.brokers[cc.owner]
	waitView(t, owner.View(), "the new disk takes the old replica's place", func() bool {
		for _, ls := range owner.View().Local() {
			if a := ls.Assignment; ls.Shard.Object.Kind == cluster.KindCache && a.Holds(newDisk) && a.Leader != (cluster.Replica{}) {
				return true
			}
		}
		return false
	})
	cc.put("after", "x")
	cc.add([]byte("n"), 3)
	cc.awaitFollowersHoldTheLogs()
	next := cc.failover()
	for i := range 5 {
		k, v := fmt.Sprint("k", i), fmt.Sprint("v", i)
		if item, err := cc.values.Get(testCtx(t), []byte(k)); err != nil || !item.Found || string(item.Value) != v {
			t.Fatalf("%s on %s after %s stopped: %+v %v, want %q", k, next, cc.old, item, err, v)
		}
	}
	if v, err := cc.values.Counter("n").Get(testCtx(t)); err != nil || v.Sum != 10 {
		t.Fatalf("the counter on %s after %s stopped: %+v %v, want 10", next, cc.old, v, err)
	}
}
