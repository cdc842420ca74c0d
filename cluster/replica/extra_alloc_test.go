package replica

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
)

// replicateAllocs is the allocations of one Quorum append of n records on
// a three-broker cluster, from the leader's Append to its acknowledgement:
// the leader's send path, the in-memory network, both followers' append
// path and their answers, every goroutine's together.
func replicateAllocs(t *testing.T, c *testCluster, n, runs int) float64 {
	sid := testShard(0)
	ld := c.brokers["a"].node.Leader(sid)
	entries := make([]shardlog.Entry, n)
	for i := range entries {
		entries[i].Value = make([]byte, 100)
	}
	w := make(waitChan, 1)
	once := func() {
		now := time.Now().UnixNano()
		for i := range entries {
			entries[i].Timestamp = now
		}
		if _, err := ld.Append(entries, 0, w); err != nil {
			t.Fatal(err)
		}
		if r := <-w; r.err != nil {
			t.Fatal(r.err)
		}
	}
	for range 200 { // warm: buffers, free lists, queues
		once()
	}
	return testing.AllocsPerRun(runs, once)
}

// Zero allocations per replicated record on the leader's send path and
// the followers' append path: what one Quorum append of 64 records
// allocates beyond one of a single record, per record, is nothing. What
// a batch allocates is logged: 9, all the MemFS's (each broker's write
// and sync of it: the MemFS copies what is written, and the file at each
// sync, to crash it later). The round trip itself allocates nothing over
// peer.TCP and a real file system (TestAReplicateRoundTripOverTCPAllocatesNothing).
func TestReplicationAllocatesNothingPerRecord(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		c.timeout = 10 * time.Second
		c.createShard(testShard(0), ConsistencyQuorum, "a", "b", "c")
		one := replicateAllocs(t, c, 1, 500)
		many := replicateAllocs(t, c, 64, 500)
		perRecord := (many - one) / 63
		t.Logf("allocations per Quorum append: %.1f of 1 record, %.1f of 64 records: %.3f per record", one, many, perRecord)
		if perRecord > 0.05 {
			t.Fatalf("%.3f allocations per replicated record (%.1f for 1 record, %.1f for 64), want 0", perRecord, one, many)
		}
	})
}
