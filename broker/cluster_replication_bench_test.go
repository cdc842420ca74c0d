package broker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
)

// The replication benchmarks: three brokers in this process, each with a
// data directory on the same disk (b.TempDir), over real TCP peer links,
// publishing 1 KiB records to one shard through its leader. Each case is
// the same stream at replication factor 1 beside 3 at Leader and Quorum,
// in the same run, so the figures are ratios on one machine
// (docs/benchmarks.md, "Replication").
//
//	go test ./broker -run '^$' -bench Replicated -benchtime 2000x
func BenchmarkReplicatedPublish(b *testing.B) {
	cases := []replicatedCase{
		{"rf1-oncommit", 1, engine.ConsistencyLeader, "OnCommit"},
		{"rf3-quorum-oncommit", 3, engine.ConsistencyQuorum, "OnCommit"},
		{"rf3-leader-oncommit", 3, engine.ConsistencyLeader, "OnCommit"},
		{"rf1-periodic", 1, engine.ConsistencyLeader, "Periodic"},
		{"rf3-quorum-periodic", 3, engine.ConsistencyQuorum, "Periodic"},
	}
	for _, pubs := range []int{1, 16} {
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/publishers=%d", c.name, pubs), func(b *testing.B) {
				leader := replicatedBenchCluster(b, c.rf, c.consistency, c.fsync)
				benchPublishers(b, leader, pubs)
			})
		}
	}
}

// replicatedCase is one stream a replication benchmark publishes to.
type replicatedCase struct {
	name        string
	rf          int
	consistency engine.Consistency
	fsync       string
}

// replicatedBenchCluster starts three brokers, creates the benchmark's
// stream and returns a client of its leader.
func replicatedBenchCluster(b *testing.B, rf int, consistency engine.Consistency, fsync string) *Broker {
	s := store.NewMemory(store.MemoryConfig{})
	b.Cleanup(func() { s.Close() })
	brokers := map[string]*Broker{}
	for _, id := range []string{"a", "b", "c"} {
		cfg := clustered(id, s, Config{DataDir: b.TempDir()})
		cfg.Cluster.ShardLease = 2 * time.Second
		brokers[id] = benchBroker(b, cfg)
	}
	for _, id := range []string{"b", "c"} {
		awaitRegistered(b, brokers["a"], id)
	}
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	cfg := engine.StreamConfig{Shards: 1, Durable: true, ReplicationFactor: rf, Consistency: consistency,
		Fsync: engine.FsyncSetting{Kind: fsync}}
	if _, err := brokers["a"].Engine().CreateStream(id, cfg); err != nil {
		b.Fatal(err)
	}
	if rf == 1 {
		for _, br := range brokers {
			if local, _ := br.View().Leader(id, 0); local {
				return br
			}
		}
		b.Fatal("no broker leads the stream")
	}
	return brokers[awaitReplicatedLeader(b, brokers, id, "")]
}

// BenchmarkReplicatedPublishInFlight is the goal's "async publishes with
// many in flight": the same streams as BenchmarkReplicatedPublish, each of
// 4 connections keeping 64 publishes of 1 KiB in flight (PublishAsync,
// waiting on the oldest once the window is full), replication factor 1
// beside 3 in the same run:
//
//	go test ./broker -run '^$' -bench ReplicatedPublishInFlight -benchtime 20000x
func BenchmarkReplicatedPublishInFlight(b *testing.B) {
	cases := []replicatedCase{
		{"rf1-periodic", 1, engine.ConsistencyLeader, "Periodic"},
		{"rf3-quorum-periodic", 3, engine.ConsistencyQuorum, "Periodic"},
		{"rf3-leader-periodic", 3, engine.ConsistencyLeader, "Periodic"},
		{"rf1-oncommit", 1, engine.ConsistencyLeader, "OnCommit"},
		{"rf3-quorum-oncommit", 3, engine.ConsistencyQuorum, "OnCommit"},
	}
	for _, c := range cases {
		b.Run(c.name+"/conns=4/window=64", func(b *testing.B) {
			leader := replicatedBenchCluster(b, c.rf, c.consistency, c.fsync)
			benchInFlight(b, leader, 4, 64)
		})
	}
}

// benchClients dials n clients of leader, each warmed by one publish.
func benchClients(b *testing.B, leader *Broker, n int) []*client.Client {
	clients := make([]*client.Client, n)
	for i := range clients {
		c, err := client.Dial(context.Background(), leader.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		clients[i] = c
		publishUntilAcked(b, c, "warm-up")
	}
	return clients
}

// shareOf is publisher p's share of total publishes split over k: the
// first total%k publishers make one more.
func shareOf(total, k, p int) int {
	if p < total%k {
		return total/k + 1
	}
	return total / k
}

// benchInFlight publishes b.N 1 KiB records to leader over conns
// connections, each keeping up to window publishes unanswered, and
// reports records/s.
func benchInFlight(b *testing.B, leader *Broker, conns, window int) {
	value := make([]byte, 1024)
	clients := benchClients(b, leader, conns)
	ctx := context.Background()
	b.ResetTimer()
	var wg sync.WaitGroup
	for p := range conns {
		n := shareOf(b.N, conns, p)
		wg.Go(func() {
			ring := make([]*client.PublishFuture, window)
			for i := range n + window {
				slot := i % window
				if f := ring[slot]; f != nil {
					if _, err := f.Wait(ctx); err != nil {
						b.Error(err)
						return
					}
					ring[slot] = nil
				}
				if i < n {
					ring[slot] = clients[p].PublishAsync(ctx, testStream, value)
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// benchPublishers publishes b.N 1 KiB records to leader from pubs
// clients, each publishing synchronously, and reports records/s and, for
// one publisher, the p50 and p99 of a publish.
func benchPublishers(b *testing.B, leader *Broker, pubs int) {
	value := make([]byte, 1024)
	clients := benchClients(b, leader, pubs)
	lat := make([][]time.Duration, pubs)
	b.ResetTimer()
	var wg sync.WaitGroup
	for p := range pubs {
		n := shareOf(b.N, pubs, p)
		wg.Go(func() {
			for range n {
				t0 := time.Now()
				if _, err := clients[p].Publish(context.Background(), testStream, value); err != nil {
					b.Error(err)
					return
				}
				lat[p] = append(lat[p], time.Since(t0))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-us")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-us")
	}
}

// BenchmarkFailover is the time from stopping a Quorum stream's leader to
// the first publish acknowledged by its successor, at the default shard
// lease (ShardLeaseDefault), over three brokers; the stopped broker comes
// back (same data directory) before the next round. It reports the p50
// and the max over its rounds (20 is what docs/benchmarks.md gives):
//
//	go test ./broker -run '^$' -bench Failover -benchtime 20x -timeout 30m
func BenchmarkFailover(b *testing.B) {
	s := store.NewMemory(store.MemoryConfig{})
	b.Cleanup(func() { s.Close() })
	dirs := map[string]string{}
	brokers := map[string]*Broker{}
	startOne := func(id string) {
		cfg := clustered(id, s, Config{DataDir: dirs[id]})
		cfg.Net.Addr = "127.0.0.1:0"
		br, err := Start(cfg)
		if err != nil {
			b.Fatal(err)
		}
		brokers[id] = br
	}
	for _, id := range []string{"a", "b", "c"} {
		dirs[id] = b.TempDir()
		startOne(id)
	}
	b.Cleanup(func() {
		for _, br := range brokers {
			br.Stop(context.Background())
		}
	})
	for _, id := range []string{"b", "c"} {
		awaitRegistered(b, brokers["a"], id)
	}
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	cfg := engine.StreamConfig{Shards: 1, Durable: true, ReplicationFactor: 3, Consistency: engine.ConsistencyQuorum,
		Fsync: engine.FsyncSetting{Kind: "OnCommit"}}
	if _, err := brokers["a"].Engine().CreateStream(id, cfg); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		leader := awaitReplicatedLeader(b, brokers, id, "")
		c, err := client.Dial(context.Background(), brokers[leader].Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		publishUntilAcked(b, c, "before")
		c.Close()
		t0 := time.Now()
		if err := brokers[leader].Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		delete(brokers, leader)
		next := awaitReplicatedLeader(b, brokers, id, leader)
		c2, err := client.Dial(context.Background(), brokers[next].Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		publishUntilAcked(b, c2, "after")
		took = append(took, time.Since(t0))
		c2.Close()
		b.StopTimer()
		startOne(leader)
		awaitRegistered(b, brokers[next], leader)
		b.StartTimer()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "max-ms")
}
