package e2e

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// A subscription until its end delivers what the shard held when it
// began, then ends with ErrEndReached; a record published after it began
// is not delivered.
func TestASubscriptionUntilItsEndStopsAtTheEndItBeganAt(t *testing.T) {
	b := newBroker(t)
	defer b.stop()
	c := b.dial(t)
	s := createStream(t, c, client.StreamConfig{})
	for i := range 5 {
		if _, err := c.Publish(testCtx(t), s, fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := c.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromEarliest(), Until: client.UntilEnd()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if end, ok := sub.EndOffset(); !ok || end != 5 {
		t.Fatalf("end offset %d %v, want 5", end, ok)
	}
	if _, err := c.Publish(testCtx(t), s, []byte("after")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev, err := range sub.Events(testCtx(t)) {
		if err != nil {
			if !errors.Is(err, client.ErrEndReached) {
				t.Fatalf("after %v: %v, want the end", got, err)
			}
			break
		}
		got = append(got, string(ev.Value))
	}
	if fmt.Sprint(got) != "[v0 v1 v2 v3 v4]" {
		t.Fatalf("delivered %v, want v0..v4 and not what came after", got)
	}
}

// A subscription from a time starts at the first record at or after it:
// here the records published after a pause, found by the broker.
func TestASubscriptionFromATimeStartsAtTheFirstRecordAtOrAfterIt(t *testing.T) {
	b := newBroker(t)
	defer b.stop()
	c := b.dial(t)
	s := createStream(t, c, client.StreamConfig{})
	base := time.Now().Add(-time.Hour)
	for i := range 20 {
		at := base.Add(time.Duration(i) * time.Minute)
		if _, err := c.Publish(testCtx(t), s, fmt.Appendf(nil, "m%d", i), client.WithTimestamp(at)); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := c.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromTime(base.Add(12*time.Minute - time.Second)),
		Until: client.UntilEnd()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.FirstOffset() != 12 {
		t.Fatalf("started at offset %d, want 12 (the first record at or after the time)", sub.FirstOffset())
	}
	ev, err := sub.Next(testCtx(t))
	if err != nil || string(ev.Value) != "m12" {
		t.Fatalf("first event %q %v, want m12", ev.Value, err)
	}
}

// The catch UntilEnd exists for: a Quorum shard's log begins with the
// generation-start record its leadership wrote, which no subscriber ever
// sees, so on a shard that holds nothing else the last offset delivered
// stays below the end for good (a promoted leader's record ends a log the
// same way). The broker says the end is reached; a sharded subscription
// ends once every shard is there.
func TestAShardedSubscriptionUntilItsEndEndsThoughAControlRecordEndsAShard(t *testing.T) {
	const shards = 2
	c := startLeasedCluster(t, 3)
	cc := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	s := client.Stream{Tenant: "acme", Namespace: "e2e", Name: "s" + sanitize(t.Name())}
	if _, err := cc.CreateStream(testCtx(t), s, client.StreamConfig{Shards: shards, ReplicationFactor: 3,
		Consistency: client.ConsistencyQuorum, Fsync: client.Fsync{Kind: client.FsyncOnCommit}}); err != nil {
		t.Fatal(err)
	}
	c.waitStream(s, shards)
	for i := range shards {
		waitCommitted(t, c, s, i, 1) // the leadership's generation start
	}
	if _, err := cc.PublishAtLeastOnce(testCtx(t), s, []byte("one"), client.WithKey(keyFor("one", 1, shards))); err != nil {
		t.Fatal(err)
	}
	sub, err := cc.SubscribeSharded(testCtx(t), s, client.ShardedOptions{Start: client.FromEarliest(), Until: client.UntilEnd()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var got []string
	for {
		ev, err := sub.Next(testCtx(t))
		if errors.Is(err, client.ErrEndReached) {
			break
		}
		if err != nil {
			t.Fatalf("after %v: %v, want the end", got, err)
		}
		got = append(got, fmt.Sprintf("%d:%d %s", ev.Shard, ev.Offset, ev.Value))
	}
	if fmt.Sprint(got) != "[1:1 one]" {
		t.Fatalf("delivered %v, want shard 1's one record after its generation start", got)
	}
	info, err := cc.DescribeStreamShards(testCtx(t), s) // a replicated shard's usage, from its own log
	if err != nil {
		t.Fatal(err)
	}
	if sh := info.Shards[1]; sh.Bytes <= 0 || sh.FirstTime.IsZero() || sh.NextOffset != 2 {
		t.Fatalf("shard 1 described as %+v, want its bytes, its record's time and offsets to 2", sh)
	}
	if sh := info.Shards[0]; !sh.FirstTime.IsZero() || sh.NextOffset != 1 {
		t.Fatalf("shard 0 described as %+v, want no record time (a control record only) and offsets to 1", sh)
	}
}

// waitCommitted waits until the leader of the shard has committed up to
// end, woken by each visibility of the shard, for at most clusterWait.
func waitCommitted(t *testing.T, c *testCluster, s client.Stream, shard int, end int64) {
	t.Helper()
	st, err := c.leader(streamID(s), shard).eng.Stream(streamID(s))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := st.Shard(shard)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		changed := sh.Changed()
		if sh.End() >= end {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("shard %d committed %d, not %d within %v", shard, sh.End(), end, clusterWait)
		}
	}
}

// A broker that does not serve subscribe_bounds is not asked (it would
// ignore the end and the subscriber would wait for good): the subscribe
// fails at once, naming the feature.
func TestABoundedSubscribeIsNotSentToABrokerWithoutTheFeature(t *testing.T) {
	b := newBroker(t)
	defer b.stop()
	c := b.dial(t, client.WithFeatures(client.DefaultFeatures&^client.FeatureSubscribeBounds))
	s := createStream(t, c, client.StreamConfig{})
	_, err := c.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Until: client.UntilEnd()})
	if !errors.Is(err, client.ErrFeatureNotNegotiated) {
		t.Fatalf("subscribe until the end without the feature: %v, want feature_not_negotiated", err)
	}
	_, err = c.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromTime(time.Now())})
	if !errors.Is(err, client.ErrFeatureNotNegotiated) {
		t.Fatalf("subscribe from a time without the feature: %v, want feature_not_negotiated", err)
	}
}
