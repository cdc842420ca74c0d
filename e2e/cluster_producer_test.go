package e2e

import (
	"testing"

	"github.com/felixbroker/felix/client"
)

// An idempotent producer's batch sent to a broker that does not lead its
// shard is refused with not_leader naming the leader's address, not
// forwarded: the sequence check is the leader's, and a batch in doubt must
// be re-sent to the one broker that knows the producer. Nothing lands, and
// the same batch sent to the leader lands once.
func TestANonLeaderNamesTheLeader(t *testing.T) {
	c := startCluster(t, 2, nil)
	s := clusterStream(t, c, c.brokers[0], client.StreamConfig{Shards: 1})
	id := streamID(s)
	leader, other := c.leader(id, 0), c.other(id, 0)
	batch := []client.Record{{Value: []byte("once")}}
	_, err := other.dial(t).Producer(s).PublishBatch(testCtx(t), 0, batch)
	wantRedirect(t, "an idempotent batch", err, leader)
	lc := leader.dial(t)
	if n := nextOffset(t, lc, s); n != 0 {
		t.Fatalf("the refused batch landed: the leader holds %d records", n)
	}
	ack, err := lc.Producer(s).PublishBatch(testCtx(t), 0, batch)
	if err != nil || ack.FirstOffset != 0 || ack.Duplicate {
		t.Fatalf("the batch at the leader: %+v %v", ack, err)
	}
}
