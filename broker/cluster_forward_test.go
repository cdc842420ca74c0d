package broker

import (
	"slices"
	"testing"

	"github.com/felixbroker/felix/engine"
)

// A smoke test of the wiring (netio's own tests cover forwarding): a
// publish sent to a broker that does not lead the shard is forwarded over
// the peer transport to the one that does, and acknowledged; the record
// is in the leader's log.
func TestAPublishThroughANonOwnerIsAcknowledged(t *testing.T) {
	s := sharedStore(t)
	a, b := start(t, clustered("a", s, Config{})), start(t, clustered("b", s, Config{}))
	waitView(t, b.View(), "b sees a and b", registered(b.View(), "a", "b"))
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	if _, err := a.Engine().CreateStream(id, engine.StreamConfig{Shards: 1, Durable: true}); err != nil {
		t.Fatal(err)
	}
	leader, other := a, b
	waitView(t, b.View(), "b sees the shard placed", func() bool { return placedSeen(b, id, 1) })
	if local, _ := b.View().Leader(id, 0); local {
		leader, other = b, a
	}
	waitView(t, other.View(), "the other sees the shard placed", func() bool { return placedSeen(other, id, 1) })
	pos, err := dial(t, other).Publish(testCtx(t), testStream, []byte("forwarded"))
	if err != nil {
		t.Fatalf("a publish through the broker that does not lead the shard: %v", err)
	}
	if got := readShard(t, dial(t, leader), testStream, 0, 1); !slices.Equal(got, []string{"forwarded"}) || pos.Offset != 0 {
		t.Fatalf("the leader's shard holds %q; the publish was acknowledged at %+v", got, pos)
	}
}
