package broker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment/vfs"
)

// benchBroker starts a broker for a benchmark, stopped at its end.
func benchBroker(b *testing.B, cfg Config) *Broker {
	b.Helper()
	cfg.Net.Addr = "127.0.0.1:0"
	br, err := Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { br.Stop(context.Background()) })
	return br
}

// BenchmarkStreamCreate is a create of a durable stream of 4 shards
// through one broker of three, from the call to its return: the catalog
// write, the control plane's placement, and this broker's view seeing it
// (ms/op is what an operator waits).
func BenchmarkStreamCreate(b *testing.B) {
	s := store.NewMemory(store.MemoryConfig{})
	b.Cleanup(func() { s.Close() })
	brokers := []*Broker{benchBroker(b, clustered("a", s, Config{})), benchBroker(b, clustered("b", s, Config{})),
		benchBroker(b, clustered("c", s, Config{}))}
	benchCreates(b, brokers[0].Engine())
}

// BenchmarkStreamCreateEmbeddedEtcd is BenchmarkStreamCreate on a cluster
// of one over an embedded etcd member with its fsyncs: what `felix serve`
// pays for a create.
func BenchmarkStreamCreateEmbeddedEtcd(b *testing.B) {
	br := benchBroker(b, Config{DataDir: b.TempDir(), Cluster: &ClusterConfig{BrokerID: "solo", Embedded: &store.EmbedConfig{}}})
	benchCreates(b, br.Engine())
}

// benchCreates creates b.N durable streams of 4 shards through e, timed.
func benchCreates(b *testing.B, e *engine.Engine) {
	cfg := engine.StreamConfig{Shards: 4, Durable: true}
	b.ResetTimer()
	for i := range b.N {
		if _, err := e.CreateStream(engine.StreamID{Tenant: "t", Namespace: "n", Name: fmt.Sprintf("s%d", i)}, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// BenchmarkBrokerJoin is a broker joining a running cluster of two: from
// Start to the moment a broker already in the cluster sees it registered
// (Start itself returns once it has registered and reconciled).
func BenchmarkBrokerJoin(b *testing.B) {
	s := store.NewMemory(store.MemoryConfig{})
	b.Cleanup(func() { s.Close() })
	first := benchBroker(b, clustered("a", s, Config{}))
	benchBroker(b, clustered("b", s, Config{}))
	for i := range b.N {
		id := fmt.Sprintf("j%d", i)
		cfg := clustered(id, s, Config{DataDir: "/data", FS: vfs.NewMem()})
		cfg.Net.Addr = "127.0.0.1:0"
		j, err := Start(cfg)
		if err != nil {
			b.Fatal(err)
		}
		awaitRegistered(b, first, id)
		b.StopTimer()
		if err := j.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// awaitRegistered waits until b's View lists broker id, at each change of
// it, for at most clusterWait.
func awaitRegistered(tb testing.TB, b *Broker, id string) {
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		changed := b.View().Changed()
		for _, r := range b.View().Status().Brokers {
			if r.ID == id {
				return
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			tb.Fatalf("%s not registered within %v", id, clusterWait)
		}
	}
}
