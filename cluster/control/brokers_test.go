package control

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// TestABrokerWhoseLeaseEndsLeavesItsShardsAssigned: b3 freezes (its
// clock stops: no renewal); its lease ends, the control plane steps
// BrokerLeft, and b3's shards keep their assignment, shown as not live;
// nothing new is placed on b3.
func TestABrokerWhoseLeaseEndsLeavesItsShardsAssigned(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		register(t, s, testBroker(1), nil)
		register(t, s, testBroker(2), nil)
		register(t, s, testBroker(3), store.NewManualClock(time.Now()))
		startController(t, s, "b1", nil)
		v := startView(t, s, testBroker(1))
		c := NewCatalog(CatalogConfig{Store: s})
		orders := streamID("orders")
		if _, err := c.CreateStream(t.Context(), orders, streamConfig(6, 1)); err != nil {
			t.Fatal(err)
		}
		before := storedAssignments(t, s)
		time.Sleep(testTTL)
		synctest.Wait()
		if b, _ := registered(t, s, "b3"); b.ID != "" {
			t.Fatal("b3 is still registered")
		}
		after := storedAssignments(t, s)
		if len(after) != 6 || !sameAssignments(before, after) {
			t.Fatalf("assignments changed when b3 left:\n%v\n%v", before, after)
		}
		wantB3NotLive(t, v, after)
		if _, err := c.CreateStream(t.Context(), streamID("payments"), streamConfig(4, 1)); err != nil {
			t.Fatal(err)
		}
		for _, a := range storedAssignments(t, s) {
			if a.Shard.Object.Name == "payments" && a.Assignment.Leader.Broker == "b3" {
				t.Fatalf("%v placed on b3, which left", a.Shard)
			}
		}
	})
}

func wantB3NotLive(t *testing.T, v *View, stored []ShardAssignment) {
	t.Helper()
	for _, s := range v.Status().Shards {
		if s.LeaderLive == (s.Assignment.Leader.Broker == "b3") {
			t.Fatalf("%v: leader %v, leader live %v", s.Shard, s.Assignment.Leader, s.LeaderLive)
		}
	}
	for _, a := range stored {
		if a.Assignment.Leader.Broker != "b3" {
			continue
		}
		if local, addr := v.Leader(streamID("orders"), a.Shard.Shard); local || addr != "" {
			t.Fatalf("a shard led by b3, gone: Leader = %v, %q; want no address", local, addr)
		}
	}
}

func sameAssignments(a, b []ShardAssignment) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Shard != b[i].Shard || !a[i].Assignment.Equal(b[i].Assignment) || a[i].Revision != b[i].Revision {
			return false
		}
	}
	return true
}

// TestABrokerBackOnANewDiskIsANewReplica: b1 stops and registers again
// on a wiped disk. Its old shards keep naming b1 on the old disk, which
// is not live and not local to the new b1; new shards are placed on b1's
// new disk: the driver passed the disk id through.
func TestABrokerBackOnANewDiskIsANewReplica(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		r1 := register(t, s, testBroker(1), nil)
		register(t, s, testBroker(2), nil)
		startController(t, s, "b2", nil)
		c := NewCatalog(CatalogConfig{Store: s})
		if _, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1)); err != nil {
			t.Fatal(err)
		}
		if err := r1.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		wiped := testBroker(1)
		wiped.DiskID = "d1-wiped"
		register(t, s, wiped, nil)
		v := startView(t, s, wiped)
		if _, err := c.CreateStream(t.Context(), streamID("payments"), streamConfig(2, 1)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		wantOnDisks(t, storedAssignments(t, s), map[string]cluster.Replica{
			"orders/0": {Broker: "b1", DiskID: "d1"}, "orders/1": {Broker: "b2", DiskID: "d2"},
			"payments/0": {Broker: "b1", DiskID: "d1-wiped"}, "payments/1": {Broker: "b1", DiskID: "d1-wiped"},
		})
		if local, addr := v.Leader(streamID("orders"), 0); local || addr != "" {
			t.Fatalf("the old disk's shard, to the new b1: Leader = %v, %q; want neither local nor known", local, addr)
		}
		if local, _ := v.Leader(streamID("payments"), 0); !local {
			t.Fatal("the new disk's shard is not local to the new b1")
		}
		if n := len(v.Local()); n != 2 {
			t.Fatalf("the new b1 holds %d shards, want the 2 placed on its new disk", n)
		}
	})
}

func wantOnDisks(t *testing.T, stored []ShardAssignment, want map[string]cluster.Replica) {
	t.Helper()
	if len(stored) != len(want) {
		t.Fatalf("%d assignments, want %d", len(stored), len(want))
	}
	for _, a := range stored {
		name := a.Shard.Object.Name + "/" + string(rune('0'+a.Shard.Shard))
		if a.Assignment.Leader != want[name] {
			t.Errorf("%s led by %v, want %v", name, a.Assignment.Leader, want[name])
		}
	}
}
