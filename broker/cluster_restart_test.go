package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
)

// Publishes forwarded through a broker while the shard's leader stops and
// comes back on the same disk: every publish acknowledged is in the
// leader's log afterwards, at the offset its ack named, and every one
// refused was refused with an error a client can act on (not_leader while
// the leader is away, or an outcome the client is told is unknown);
// none is acknowledged by a broker that does not hold the shard.
//
// The leader comes back on another peer port (0: any free one) and on the
// same one (a fixed --peer-addr): either way the ingress dials it at once,
// not after the backoff its absence earned.
func TestForwardedPublishesAcknowledgedAcrossALeaderRestartAreAllKept(t *testing.T) {
	t.Run("another peer port", func(t *testing.T) { forwardAcrossRestart(t, "127.0.0.1:0") })
	t.Run("the same peer port", func(t *testing.T) { forwardAcrossRestart(t, freeAddr(t)) })
}

func forwardAcrossRestart(t *testing.T, peerAddr string) {
	s := sharedStore(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	bConfig := func() Config {
		cfg := clustered("b", s, Config{DataDir: dirB})
		cfg.Cluster.PeerAddr = peerAddr
		return cfg
	}
	a := start(t, clustered("a", s, Config{DataDir: dirA}))
	b := start(t, bConfig())
	waitView(t, a.View(), "a sees a and b", registered(a.View(), "a", "b"))
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	// Two shards: one of them is b's (placement spreads leaders).
	if _, err := a.Engine().CreateStream(id, engine.StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	shard := shardOfB(t, a, b, id, streamOpen(b, id))
	key := client.WithKey(keyOf(shard, 2))
	c := dial(t, a)

	acked := map[int64]string{}
	var mu sync.Mutex
	// publish sends n publishes through a and records what is
	// acknowledged; it reports failures with Errorf (it runs on several
	// goroutines) and returns how many were refused.
	publish := func(n int, tag string) (refused int) {
		for i := range n {
			v := fmt.Sprintf("%s-%d", tag, i)
			pos, err := c.Publish(testCtx(t), testStream, []byte(v), key)
			if err != nil {
				if !errors.Is(err, client.ErrNotLeader) && !client.Ambiguous(err) && !client.Retryable(err) {
					t.Errorf("publish %s refused with %v: neither a redirect nor an outcome to retry", v, err)
					return refused
				}
				refused++
				continue
			}
			if pos.Shard != shard {
				t.Errorf("publish %s acknowledged on shard %d, want %d", v, pos.Shard, shard)
				return refused
			}
			mu.Lock()
			if prev, dup := acked[pos.Offset]; dup {
				t.Errorf("offset %d acknowledged twice: %s and %s", pos.Offset, prev, v)
			}
			acked[pos.Offset] = v
			mu.Unlock()
		}
		return refused
	}
	publish(20, "before")

	// Eight publishers keep going while b stops: some publishes are in
	// flight at the leader when it goes.
	var wg sync.WaitGroup
	quit := make(chan struct{})
	for p := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				publish(1, fmt.Sprintf("during-%d-%d", p, i))
			}
		})
	}
	waitAcked := func(n int) {
		for {
			mu.Lock()
			k := len(acked)
			mu.Unlock()
			if k >= n {
				return
			}
			if t.Failed() {
				t.FailNow()
			}
			publish(1, fmt.Sprintf("pace-%d", k))
		}
	}
	waitAcked(60)
	if err := b.Stop(context.Background()); err != nil {
		t.Errorf("stopping b: %v", err)
	}
	close(quit)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	waitView(t, a.View(), "b gone", registered(a.View(), "a"))
	if refused := publish(5, "away"); refused != 5 {
		t.Fatalf("%d of 5 publishes to a shard whose only broker is down were acknowledged", 5-refused)
	}

	b = start(t, bConfig())
	waitView(t, a.View(), "b back", func() bool {
		leader, ok := a.View().LeaderBroker(id, shard)
		return ok && leader == "b"
	})
	if refused := publish(20, "after"); refused != 0 {
		t.Fatalf("%d of 20 publishes refused with b back on its disk", refused)
	}

	end := 0
	for off := range acked {
		end = max(end, int(off)+1)
	}
	got := readShard(t, dial(t, b), testStream, shard, end)
	for off, v := range acked {
		if int(off) >= len(got) || got[off] != v {
			t.Fatalf("offset %d was acknowledged for %q; after the restart b's shard holds %q there", off, v, at(got, int(off)))
		}
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(nothing)"
}
