package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster/store"
)

// clusterWindow is how many asynchronous publishes the cluster benchmark
// keeps in flight.
const clusterWindow = 64

// benchRound is how many publishes each way takes before the other's turn.
const benchRound = 2000

// BenchmarkClusterClientPublish1KiB publishes 1 KiB records with keys
// spread over the six shards of an in-memory stream on three brokers,
// keeping clusterWindow publishes in flight: once through one
// ClusterClient (which routes each to its shard's leader), and once, in
// the same run and over the same keys, through three Clients each dialed
// to a broker by hand, every record handed to the Client of its shard's
// leader. It reports both rates and their ratio (x-by-hand); ns/op is
// one publish each way.
func BenchmarkClusterClientPublish1KiB(b *testing.B) {
	const shards = 6
	st := store.NewMemory(store.MemoryConfig{})
	b.Cleanup(func() { st.Close() })
	nodes := startBrokers(b, st, 3, 0)
	cc := dialCluster(b, addrs(nodes...), client.WithPingInterval(0))
	ctx := testCtx(b)
	s := client.Stream{Tenant: "acme", Namespace: "bench", Name: "spread"}
	if _, err := cc.CreateStream(ctx, s, client.StreamConfig{Shards: shards, InMemory: true}); err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, shards)
	for i := range keys {
		keys[i] = keyFor("k", i, shards)
		if _, err := cc.PublishAtLeastOnce(ctx, s, []byte("warm"), client.WithKey(keys[i])); err != nil {
			b.Fatal(err)
		}
	}
	byHand := handRouted(b, cc, s, shards)
	value := make([]byte, recordBytes)
	viaCluster := func(key []byte) *client.PublishFuture { return cc.PublishAsync(ctx, s, value, client.WithKey(key)) }
	viaHand := func(key []byte) *client.PublishFuture {
		return byHand[client.ShardFor(key, shards)].PublishAsync(ctx, s, value, client.WithKey(key))
	}
	b.ResetTimer()
	// Rounds, alternating which goes first, so that neither has the
	// warmer machine: the figures of one process on two cores are noisy.
	var cluster, hand time.Duration
	for done, round := 0, 0; done < b.N; round++ {
		n := min(b.N-done, benchRound)
		if round%2 == 0 {
			cluster += publishSpread(b, n, keys, viaCluster)
			hand += publishSpread(b, n, keys, viaHand)
		} else {
			hand += publishSpread(b, n, keys, viaHand)
			cluster += publishSpread(b, n, keys, viaCluster)
		}
		done += n
	}
	b.StopTimer()
	perSec := func(d time.Duration) float64 { return float64(b.N) / d.Seconds() }
	b.ReportMetric(perSec(cluster), "records/s")
	b.ReportMetric(perSec(hand), "by-hand-records/s")
	b.ReportMetric(perSec(cluster)/perSec(hand), "x-by-hand")
}

// handRouted is, per shard, a Client dialed by hand to its leader (one
// Client per broker, shared by the shards it leads).
func handRouted(b *testing.B, cc *client.ClusterClient, s client.Stream, shards int) []*client.Client {
	info, err := cc.DescribeStream(testCtx(b), s)
	if err != nil {
		b.Fatal(err)
	}
	byAddr := map[string]*client.Client{}
	out := make([]*client.Client, shards)
	for i, sh := range info.Shards {
		c := byAddr[sh.LeaderAddr]
		if c == nil {
			if c, err = client.Dial(testCtx(b), sh.LeaderAddr, client.WithPingInterval(0)); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = c.Close() })
			byAddr[sh.LeaderAddr] = c
		}
		out[i] = c
	}
	if len(byAddr) < 2 {
		b.Fatalf("the %d shards are led by %d broker(s): not spread", shards, len(byAddr))
	}
	return out
}

// publishSpread sends n publishes, the keys in turn, window at a time,
// and returns the time until the last was acknowledged.
func publishSpread(b *testing.B, n int, keys [][]byte, send func(key []byte) *client.PublishFuture) time.Duration {
	ctx := context.Background()
	window := make([]*client.PublishFuture, 0, clusterWindow)
	start := time.Now()
	for i := range n {
		if len(window) == clusterWindow {
			if _, err := window[0].Wait(ctx); err != nil {
				b.Fatal(fmt.Errorf("publish %d: %w", i, err))
			}
			window = window[1:]
		}
		window = append(window, send(keys[i%len(keys)]))
	}
	for _, f := range window {
		if _, err := f.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}
