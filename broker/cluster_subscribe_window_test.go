package broker

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
)

// replicatedLeaderOn is b's leadership of shard 0 of id, or nil.
func replicatedLeaderOn(b *Broker, id engine.StreamID) *replica.Leader {
	return b.node.replicas.StreamLeader(streamShard(id, 0))
}

// A leader promoted a moment ago serves no subscribe until its generation
// start commits, since its end may lie below what its predecessor
// acknowledged: a stream of two replicas at Quorum whose leader stops has
// its other replica promoted (one answer of two suffices) while its start
// record cannot commit (two of two must hold it). In that window a
// subscribe from the latest offset or until the end is refused not_leader
// (a cluster client tries again) and a describe withholds the shard's
// offsets; once the stopped broker is back, a subscription until the end
// delivers every record acknowledged before the failover.
func TestANewLeaderServesNoSubscribeUntilItsGenerationStartCommits(t *testing.T) {
	st := sharedStore(t)
	cfgs, brokers := map[string]Config{}, map[string]*Broker{}
	for _, id := range []string{"a", "b"} {
		cfg := clustered(id, st, Config{DataDir: t.TempDir()})
		cfg.Cluster.ShardLease, cfg.Cluster.PublishTimeout = replicationLease, 2*time.Second
		cfgs[id], brokers[id] = cfg, start(t, cfg)
	}
	waitView(t, brokers["a"].View(), "a sees a and b", registered(brokers["a"].View(), "a", "b"))
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	if _, err := brokers["a"].Engine().CreateStream(id, engine.StreamConfig{Shards: 1, Durable: true, ReplicationFactor: 2,
		Consistency: engine.ConsistencyQuorum, Fsync: engine.FsyncSetting{Kind: "OnCommit"}}); err != nil {
		t.Fatal(err)
	}
	first := awaitReplicatedLeader(t, brokers, id, "")
	var acked []string
	for i := range 5 {
		v := fmt.Sprint("v", i)
		publishUntilAcked(t, dial(t, brokers[first]), v)
		acked = append(acked, v)
	}
	stop(t, brokers[first])
	delete(brokers, first)
	next := awaitReplicatedLeader(t, brokers, id, first)
	l := replicatedLeaderOn(brokers[next], id)
	if l == nil || l.Started() {
		t.Fatalf("%s leads with its start committed, though its only follower %s is stopped", next, first)
	}
	// What it learnt as a follower: often one batch short of what its
	// predecessor acknowledged (the generation start and v0..v4 end at 6).
	t.Logf("%s leads at generation %d with its commit at %d", next, l.Generation(), l.Commit())
	c := dial(t, brokers[next])
	ctx := testCtx(t)
	for _, opts := range []client.SubscribeOptions{{Start: client.FromLatest()}, {Start: client.FromEarliest(), Until: client.UntilEnd()}} {
		sub, err := c.Subscribe(ctx, testStream, 0, opts)
		if err == nil {
			end, _ := sub.EndOffset()
			t.Fatalf("subscribe %+v at %s before its start committed was served from %d until %d; want a retryable not_leader",
				opts.Start, next, sub.FirstOffset(), end)
		}
		if !errors.Is(err, client.ErrNotLeader) || !client.Retryable(err) {
			t.Fatalf("subscribe %+v at %s before its start committed: %v; want a retryable not_leader", opts.Start, next, err)
		}
	}
	info, err := c.DescribeStream(ctx, testStream)
	if err != nil {
		t.Fatal(err)
	}
	if sh := info.Shards[0]; sh.NextOffset != 0 {
		t.Fatalf("%s described the shard as %+v before its start committed; want no offsets", next, sh)
	}
	brokers[first] = start(t, cfgs[first]) // back on its disk: it follows, and the start commits
	seeds := []string{brokers["a"].Addr().String(), brokers["b"].Addr().String()}
	cc, err := client.DialCluster(ctx, seeds, client.WithRetryPolicy(client.RetryPolicy{Attempts: 200,
		InitialBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Deadline: clusterWait}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	sub, err := cc.Subscribe(ctx, testStream, 0, client.SubscribeOptions{Start: client.FromEarliest(), Until: client.UntilEnd()})
	if err != nil {
		t.Fatalf("subscribe once %s is back: %v", first, err)
	}
	defer sub.Close()
	var got []string
	for ev, err := range sub.Events(ctx) {
		if errors.Is(err, client.ErrEndReached) {
			break
		}
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		if ev.Missed != 0 {
			t.Fatalf("offset %d after %d missed: nothing was dropped", ev.Offset, ev.Missed)
		}
		got = append(got, string(ev.Value))
	}
	if end, _ := sub.EndOffset(); !slices.Equal(firstPlaces(got)[:min(len(acked), len(firstPlaces(got)))], acked) || end < int64(len(acked))+2 {
		t.Fatalf("until the end (%d) delivered %v; want every record acknowledged before the failover, %v", end, got, acked)
	}
}
