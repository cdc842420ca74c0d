package replica

import (
	"runtime"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
)

// allocsPerRound is the heap allocations of every goroutine in the
// process per call of round, over runs calls after warm ones: a mean,
// not testing.AllocsPerRun's whole count, so that what a background
// goroutine allocates now and then (a pool's per-P array after a GC)
// shows as the fraction it is.
func allocsPerRound(warm, runs int, round func()) float64 {
	for range warm {
		round()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		round()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}

// appendRound is one round of inFlight appends of n records each on ld,
// made back to back and then waited for: with inFlight above the
// leader's slots per follower, part of them is shipped from the log by
// the leader's goroutine rather than at once from the entries.
func appendRound(t testing.TB, ld *Leader, n, inFlight int) func() {
	entries := make([][]shardlog.Entry, inFlight)
	for i := range entries {
		entries[i] = make([]shardlog.Entry, n)
		for j := range entries[i] {
			entries[i][j].Value = make([]byte, 100)
		}
	}
	w := make(waitChan, inFlight)
	return func() {
		now := time.Now().UnixNano()
		for _, batch := range entries {
			for j := range batch {
				batch[j].Timestamp = now
			}
			if _, err := ld.Append(batch, 0, w); err != nil {
				t.Fatal(err)
			}
		}
		for range inFlight {
			if r := <-w; r.err != nil {
				t.Fatal(r.err)
			}
		}
	}
}

// replicateAllocsMax is what a replicated append may allocate, every
// goroutine of the three brokers together, before the test fails. The
// round trip allocates nothing; what the measure finds beside it is the
// log's, the ring's and the runtime's, now and then and more often on a
// loaded machine, not per round trip: the log's periodic recovery point,
// a ring sync's waiter when more are out than it keeps idle, a
// runtime.Pinner's slice, a segment's index growing (tcpCluster spaces
// its entries a megabyte apart), a runtime sudog or thread. Over 25 runs
// on a 2-core VM shared with other builds, 0 to 0.074 per append. A
// regression of one allocation per REPLICATE is 2 per append (one per
// follower), and at least 1 with 32 in flight, whose REPLICATEs carry
// several appends.
const replicateAllocsMax = 0.25

// A REPLICATE round trip over loopback peer.TCP, the transport brokers
// use, allocates nothing in steady state: the leader's framing and Send,
// the link's write and its reader, the follower's served connection,
// decode, lookup by the log's (long) names, AppendAt and fsync, its
// REPLICATE_ACK written back, and the leader's handling of it, settle and
// acknowledgement included. The three brokers and the logs' committers
// run in this process, so every goroutine's allocations count.
// Measured per append: of one record, of 64, of 32 appends in flight at
// once (twice the leader's slots per follower: the rest are shipped from
// the log), and at the Leader level.
func TestAReplicateRoundTripOverTCPAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const runs = 500
	quorum := newTCPCluster(t, t.TempDir(), ConsistencyQuorum, shardlog.OnCommit(), "a", "b", "c")
	leader := newTCPCluster(t, t.TempDir(), ConsistencyLeader, shardlog.OnCommit(), "d", "e", "f")
	for _, c := range []*tcpCluster{quorum, leader} {
		// Warm with the most in flight a leader sends (its slots to each
		// follower, full), of small appends and of large ones, so that
		// every free list (the leader's calls, the followers' replies and
		// waiters) and every buffer (the frames, the links' and served
		// connections' buffers, the followers' entries) has reached its
		// high-water mark, which a follower lagging behind the quorum
		// would otherwise reach bit by bit: each growth is an allocation.
		for _, warm := range []func(){appendRound(t, c.leader(), 1, 2*DefaultInflight), appendRound(t, c.leader(), 64, 2*DefaultInflight)} {
			for range 50 {
				warm()
			}
		}
	}
	cases := []struct {
		name        string
		c           *tcpCluster
		n, inFlight int
	}{
		{"quorum, 1 record", quorum, 1, 1},
		{"quorum, 64 records", quorum, 64, 1},
		{"quorum, 32 appends in flight", quorum, 1, 2 * DefaultInflight},
		{"leader, 1 record", leader, 1, 1},
	}
	for _, tc := range cases {
		per := allocsPerRound(10, runs/tc.inFlight+1, appendRound(t, tc.c.leader(), tc.n, tc.inFlight)) / float64(tc.inFlight)
		t.Logf("%s: %.3f allocations per append", tc.name, per)
		if per > replicateAllocsMax {
			t.Errorf("%s: %.3f allocations per append over TCP, want 0 (at most %v, the runtime's and the log's now and then)",
				tc.name, per, replicateAllocsMax)
		}
	}
}
