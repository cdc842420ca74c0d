package e2e

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
)

// A cluster client seeded only with a broker that does not lead the shard,
// holding a token that may subscribe and publish but not describe (so it
// cannot look the leader up), subscribes anyway: the broker's not_leader
// names the owner and the client goes there. A plain client at the same
// broker is refused, which is what makes the redirect the only way in.
func TestAClusterClientFollowsTheRedirectToTheOwner(t *testing.T) {
	cl := newClock()
	k := newKey(t, cl)
	c := startCluster(t, 2, func(i int, nc *netio.Config) {
		v, err := auth.NewVerifier([]ed25519.PublicKey{k.public()}, cl.Now)
		if err != nil {
			t.Fatal(err)
		}
		nc.Authenticator = netio.NewTokenAuthenticator(v)
	})
	s := testStream(t, "orders")
	if _, err := dialWith(t, c.brokers[0], k.token("acme", "admin:*")).CreateStream(testCtx(t), s, client.StreamConfig{Shards: 1}); err != nil {
		t.Fatal(err)
	}
	c.waitStream(s, 1)
	leader, other := c.leader(streamID(s), 0), c.other(streamID(s), 0)
	token := k.token("acme", "subscribe:orders/*", "publish:orders/*")
	_, err := dialWith(t, other, token).Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	wantRedirect(t, "a plain subscribe", err, leader)

	cc := dialCluster(t, []string{other.addr()}, client.WithToken(token))
	if _, err := cc.DescribeStream(testCtx(t), s); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("describe with a token that may not: %v, want forbidden", err)
	}
	if _, err := cc.Publish(testCtx(t), s, []byte("v")); err != nil {
		t.Fatalf("publish through the non-owner: %v", err)
	}
	sub, err := cc.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatalf("the cluster client's subscribe: %v", err)
	}
	defer sub.Close()
	if ev, err := sub.Next(testCtx(t)); err != nil || string(ev.Value) != "v" || ev.Offset != 0 {
		t.Fatalf("the first event at the owner: %+v %v", ev, err)
	}
	if !slices.Contains(cc.Brokers(), leader.addr()) {
		t.Fatalf("the owner %s is not among the brokers the client knows: %v", leader.addr(), cc.Brokers())
	}
}

// Given one seed, the client asks it for the cluster's brokers and will
// use every one of them, the seed first.
func TestAClientGivenOneSeedLearnsTheOtherBrokers(t *testing.T) {
	c := startCluster(t, 3, nil)
	seed := c.brokers[1]
	cc := dialCluster(t, []string{seed.addr()})
	got := cc.Brokers()
	if len(got) != 3 || got[0] != seed.addr() {
		t.Fatalf("brokers %v: want the seed %s first and the three brokers", got, seed.addr())
	}
	for _, a := range addrs(c.brokers...) {
		if !slices.Contains(got, a) {
			t.Fatalf("brokers %v lack %s", got, a)
		}
	}
}

// Given one seed, the client learns the others, and when the seed stops
// it keeps working through them: a describe, and publishes to and a
// subscription of the shards the seed did not lead.
func TestAClientGivenOneSeedSurvivesLosingIt(t *testing.T) {
	const shards = 6
	c := startCluster(t, 3, nil)
	seed := c.brokers[0]
	cc := dialCluster(t, []string{seed.addr()})
	s := clusterStream(t, c, seed, client.StreamConfig{Shards: shards})
	before, err := cc.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	seed.stop(t)
	if _, err := cc.DescribeStream(testCtx(t), s); err != nil {
		t.Fatalf("describe with the seed stopped: %v", err)
	}
	for i := range shards {
		if before.Shards[i].LeaderAddr == seed.addr() {
			continue // unreplicated: gone with the seed
		}
		pos, err := cc.Publish(testCtx(t), s, []byte("after"), client.WithKey(keyFor("k", i, shards)))
		if err != nil || int(pos.Shard) != i {
			t.Fatalf("publish to shard %d with the seed stopped: %+v %v", i, pos, err)
		}
		sub, err := cc.Subscribe(testCtx(t), s, i, client.SubscribeOptions{Start: client.FromOffset(pos.Offset)})
		if err != nil {
			t.Fatalf("subscribe to shard %d with the seed stopped: %v", i, err)
		}
		ev, err := sub.Next(testCtx(t))
		_ = sub.Close()
		if err != nil || string(ev.Value) != "after" {
			t.Fatalf("shard %d: %+v %v", i, ev, err)
		}
	}
}

// A publisher whose broker (the replicated shard's leader) stops keeps
// publishing: PublishAtLeastOnce rides out the failover to the promoted
// replica, and Publish works again after it. Nothing acknowledged is lost.
func TestAPublisherSurvivesLosingItsBroker(t *testing.T) {
	c := startLeasedCluster(t, 3)
	cc := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	s := replicatedStream(t, cc, 1)
	old := leaderOf(t, c, cc, s, 0)
	for i := range 3 {
		if _, err := cc.Publish(testCtx(t), s, fmt.Appendf(nil, "before-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	old.stop(t)
	if _, err := cc.PublishAtLeastOnce(testCtx(t), s, []byte("across")); err != nil {
		t.Fatalf("publishing across the failover: %v", err)
	}
	if _, err := cc.Publish(testCtx(t), s, []byte("after")); err != nil {
		t.Fatalf("publishing after the failover: %v", err)
	}
	if now := leaderOf(t, c, cc, s, 0); now == old {
		t.Fatalf("%s still leads after it stopped", old.id)
	}
	got := readValues(t, cc, s, 6)
	for _, v := range []string{"ready-0", "before-0", "before-1", "before-2", "across", "after"} {
		if !slices.Contains(got, v) {
			t.Fatalf("%q acknowledged and missing after the failover: %v", v, got)
		}
	}
}

// Records published, one after the other with PublishAtLeastOnce, while
// the shard's leader stops part way are all readable afterwards from the
// promoted replica (some maybe twice: at least once).
func TestRecordsPublishedAcrossAFailoverAreAllReadable(t *testing.T) {
	const total, stopAt = 30, 10
	c := startLeasedCluster(t, 3)
	cc := dialCluster(t, addrs(c.brokers...), client.WithRetryPolicy(failoverPolicy))
	s := replicatedStream(t, cc, 1)
	old := leaderOf(t, c, cc, s, 0)
	want := []string{"ready-0"}
	stopped := make(chan struct{})
	for i := range total {
		if i == stopAt {
			go func() { old.stop(t); close(stopped) }()
		}
		v := fmt.Sprint("r", i)
		if _, err := cc.PublishAtLeastOnce(testCtx(t), s, []byte(v)); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		want = append(want, v)
	}
	<-stopped
	got := readValues(t, cc, s, len(want))
	for _, v := range want {
		if !slices.Contains(got, v) {
			t.Fatalf("%q acknowledged and missing: read %v", v, got)
		}
	}
}

// readValues reads the stream from the earliest record through cc until
// it has n distinct values, and returns every value read.
func readValues(t *testing.T, cc *client.ClusterClient, s client.Stream, n int) []string {
	t.Helper()
	sub, err := cc.SubscribeSharded(testCtx(t), s, client.ShardedOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var got []string
	distinct := map[string]bool{}
	for len(distinct) < n {
		ev, err := sub.Next(testCtx(t))
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		got = append(got, string(ev.Value))
		distinct[string(ev.Value)] = true
	}
	return got
}
