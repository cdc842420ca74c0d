package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio/wire"
)

// A tenant's stored bytes count its consumer groups' logs once the group
// manager is named, and never another tenant's.
func TestStoredBytesCountTheTenantsGroups(t *testing.T) {
	var groups *group.Manager
	b := startGroupBroker(t, func(cfg *Config) { groups = cfg.Groups })
	c := b.client(wire.FeaturesAll)
	ref := b.createDurable("orders", 1)
	c.publishValues(ref, "a", "b", "c")
	g := wire.GroupRef{Stream: ref, Group: []byte("billing")}
	if recs := c.pollRecords(wire.GroupPoll{Group: g, MaxRecords: 10}); len(recs) != 3 {
		t.Fatalf("poll: %+v", recs)
	}
	c.settle(func(id uint64) []byte { return wire.AppendGroupAck(nil, id, g, []uint64{0, 1, 2}) })
	clock := newFakeClock()
	streamsOnly := NewStoredBytes(b.e, time.Second, clock.Now).Of("acme")
	withGroups := NewStoredBytes(b.e, time.Second, clock.Now).Groups(groups)
	// A cursor record nobody waits for may land between two readings:
	// the figure lies between the groups' bytes read before and after it.
	before := groups.TenantBytes("acme")
	total := withGroups.Of("acme")
	after := groups.TenantBytes("acme")
	if before == 0 || total < streamsOnly+before || total > streamsOnly+after {
		t.Fatalf("with the groups %d, streams %d, groups %d then %d", total, streamsOnly, before, after)
	}
	if n := withGroups.Of("globex"); n != 0 {
		t.Fatalf("another tenant's bytes counted: %d", n)
	}
}
