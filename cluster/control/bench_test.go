package control

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
)

// BenchmarkCreateToPlaced: from a CreateStream call to its return, every
// shard placed, on an embedded etcd with fsync on, three brokers
// registered and one control plane.
func BenchmarkCreateToPlaced(b *testing.B) {
	for _, shards := range []int{1, 6, 1024} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			s := startEtcd(b, true)
			for n := 1; n <= 3; n++ {
				benchRegister(b, s, n)
			}
			c, err := StartController(ControllerConfig{Store: s, ID: "b1"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(c.Close)
			cat := NewCatalog(CatalogConfig{Store: s, PlaceWait: time.Minute})
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				if _, err := cat.CreateStream(ctx, streamID(fmt.Sprintf("s%d", i)), streamConfig(shards, 1)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/create")
		})
	}
}

// BenchmarkBrokerJoin: from a Register call until another broker's view
// has the registration, on an embedded etcd with fsync on.
func BenchmarkBrokerJoin(b *testing.B) {
	s := startEtcd(b, true)
	v, err := StartView(ViewConfig{Store: s, Local: testBroker(1).Replica()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(v.Close)
	ctx := context.Background()
	n := 1
	for b.Loop() {
		n++
		changed := v.Changed()
		r, err := Register(ctx, RegistrationConfig{Store: s, Broker: testBroker(n)})
		if err != nil {
			b.Fatal(err)
		}
		for !v.hasBroker(testBroker(n).ID) {
			<-changed
			changed = v.Changed()
		}
		b.StopTimer()
		if err := r.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/join")
}

func (v *View) hasBroker(id string) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	_, ok := v.state.brokers[id]
	return ok
}

func benchRegister(b *testing.B, s store.Store, n int) {
	r, err := Register(context.Background(), RegistrationConfig{Store: s, Broker: testBroker(n)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Stop(context.Background()) })
}

// BenchmarkViewLeader is the Ownership question every publish asks.
func BenchmarkViewLeader(b *testing.B) {
	v := viewWithShards(b, 1024)
	id := engine.StreamID{Tenant: "acme", Namespace: "shop", Name: "orders"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i = (i + 1) % 1024
		if local, _ := v.Leader(id, i); local != (i%3 == 0) {
			b.Fatal("shard not led here")
		}
	}
}
