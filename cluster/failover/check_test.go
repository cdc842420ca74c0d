package failover_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// TestNewRefusesABadConfig: the epoch and the lease must be positive.
func TestNewRefusesABadConfig(t *testing.T) {
	for _, cfg := range []failover.Config{{Epoch: 0, Lease: lease}, {Epoch: -1, Lease: lease}, {Epoch: 1, Lease: 0}} {
		if _, err := failover.New(cfg); !isInvalid(err) {
			t.Errorf("New(%+v): %v, want an invalid event", cfg, err)
		}
	}
	m, err := failover.New(failover.Config{Epoch: 9, Lease: lease, Now: time.Hour})
	if err != nil || m.Epoch() != 9 || m.Lease() != lease || m.Status().Now != time.Hour {
		t.Fatalf("New: %v, epoch %d, lease %v", err, m.Epoch(), m.Lease())
	}
}

// TestInvalidEventsChangeNothing: an event no state could make valid is
// refused with ErrInvalidEvent, and the machine is as it was.
func TestInvalidEventsChangeNothing(t *testing.T) {
	id := shardN(0)
	good := cluster.StoredAssignment{Shard: id, Revision: 10,
		Assignment: cluster.Assignment{Replicas: []cluster.Replica{ra, rb, rc}, Leader: ra, Generation: 1, Incarnation: 1}}
	assigned := func(edit func(*failover.Assigned)) failover.Assigned {
		ev := failover.Assigned{Stored: good, ReplicationFactor: 3, Consistency: failover.Quorum}
		ev.Stored.Assignment = good.Assignment.Clone()
		edit(&ev)
		return ev
	}
	badObject := cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: "t", Name: "x"}}
	cases := []struct {
		name string
		ev   failover.Event
	}{
		{"nil", nil},
		{"a revision of 0", assigned(func(ev *failover.Assigned) { ev.Stored.Revision = 0 })},
		{"generation 0", assigned(func(ev *failover.Assigned) { ev.Stored.Assignment.Generation = 0 })},
		{"no replicas", assigned(func(ev *failover.Assigned) { ev.Stored.Assignment.Replicas = nil })},
		{"a replica twice", assigned(func(ev *failover.Assigned) { ev.Stored.Assignment.Replicas[1] = ra })},
		{"a replica with no disk", assigned(func(ev *failover.Assigned) { ev.Stored.Assignment.Replicas[2].DiskID = "" })},
		{"a leader outside the set", assigned(func(ev *failover.Assigned) { ev.Stored.Assignment.Leader = rd })},
		{"replication factor 0", assigned(func(ev *failover.Assigned) { ev.ReplicationFactor = 0 })},
		{"replication factor 8", assigned(func(ev *failover.Assigned) { ev.ReplicationFactor = 8 })},
		{"no consistency", assigned(func(ev *failover.Assigned) { ev.Consistency = 0 })},
		{"a bad object name", assigned(func(ev *failover.Assigned) { ev.Stored.Shard = badObject })},
		{"a shard out of range", assigned(func(ev *failover.Assigned) { ev.Stored.Shard.Shard = cluster.ShardsMax })},
		{"removed, a bad name", failover.Removed{Shard: badObject}},
		{"a heartbeat from nobody", failover.Heartbeat{Seq: 1}},
		{"a heartbeat reporting a shard twice", failover.Heartbeat{Broker: ra, Seq: 1,
			Reports: []failover.Report{leads(id, 1, 0), leads(id, 1, 0)}}},
		{"a heartbeat reporting a bad shard", failover.Heartbeat{Broker: ra, Seq: 1,
			Reports: []failover.Report{leads(badObject, 1, 0)}}},
		{"a heartbeat of too many reports", failover.Heartbeat{Broker: ra, Seq: 1, Reports: make([]failover.Report, 1<<16+1)}},
		{"a fence answer from nobody", failover.FenceReplied{Shard: id, Generation: 2, Epoch: 1}},
		{"write 0 done", failover.WriteDone{Seq: 0, Revision: 11}},
		{"a write never sent done", failover.WriteDone{Seq: 2, Revision: 11}},
		{"a write done at revision 0", failover.WriteDone{Seq: 1, Revision: 0}},
		{"a write never sent failed", failover.WriteFailed{Seq: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 1, 0)
			h.step(assigned(func(*failover.Assigned) {}))
			h.oneWrite(h.tick(lease)) // write 1 is in flight
			before := h.m.Status()
			if err := h.m.Step(c.ev); !isInvalid(err) || !strings.HasPrefix(err.Error(), "felix/cluster/failover: ") {
				t.Fatalf("Step: %v, want an invalid event", err)
			}
			if acts := h.m.Ready(); len(acts) != 0 {
				t.Fatalf("actions %v after an invalid event", acts)
			}
			if after := h.m.Status(); !reflect.DeepEqual(after, before) {
				t.Fatalf("status changed:\n%+v\n%+v", after, before)
			}
		})
	}
}

// TestStatusIsACopy: changing what Status returned, or the slices an
// event carried, changes nothing in the machine.
func TestStatusIsACopy(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	replicas := []cluster.Replica{ra, rb, rc}
	h.assign(id, failover.Quorum, 1, 10, ra, replicas...)
	replicas[0] = rd
	st := h.m.Status()
	st.Shards[0].Stored.Assignment.Replicas[1] = re
	got := h.shardStatus(id).Stored.Assignment.Replicas
	if !reflect.DeepEqual(got, []cluster.Replica{ra, rb, rc}) {
		t.Fatalf("replicas %v: the machine kept a caller's slice", got)
	}
	if p := h.shardStatus(id).Promotion.Phase.String(); p != "serving" {
		t.Fatalf("phase %q", p)
	}
	if c := failover.Quorum.String() + failover.Leader.String(); c != "quorumleader" {
		t.Fatalf("consistency %q", c)
	}
}
