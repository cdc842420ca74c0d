package replica

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
)

// tcpCluster replicates, under -race too: Quorum appends over peer.TCP,
// four in flight at a time, are each acknowledged once a follower holds
// them, and each follower's log is a prefix of the leader's, record for
// record (offset, generation, flags, value).
func TestQuorumAppendsOverTCPReachAFollowerAsTheLeaderWroteThem(t *testing.T) {
	c := newTCPCluster(t, t.TempDir(), ConsistencyQuorum, shardlog.OnCommit(), "a", "b", "c")
	ld := c.leader()
	const rounds, inFlight = 50, 4
	w := make(waitChan, inFlight)
	var last int64
	for r := range rounds {
		for i := range inFlight {
			e := []shardlog.Entry{{Value: fmt.Appendf(nil, "r-%d-%d", r, i), Timestamp: time.Now().UnixNano()}}
			if _, err := ld.Append(e, 0, w); err != nil {
				t.Fatal(err)
			}
		}
		for range inFlight {
			res := <-w
			if res.err != nil {
				t.Fatal(res.err)
			}
			last = max(last, res.first)
		}
	}
	followers := map[string][]logRecord{}
	for _, id := range []string{"b", "c"} {
		followers[id] = recordsOf(t, c.brokers[id].log)
	}
	leader := recordsOf(t, c.brokers["a"].log) // after the followers': it holds at least what they do
	holders := 0
	for id, recs := range followers {
		if len(recs) > len(leader) || !slices.Equal(recs, leader[:len(recs)]) {
			t.Errorf("%s's log (%d records) is not a prefix of the leader's (%d)", id, len(recs), len(leader))
		}
		if len(recs) > 0 && recs[len(recs)-1].offset >= last {
			holders++
		}
	}
	if holders == 0 {
		t.Errorf("no follower holds offset %d, acknowledged at Quorum", last)
	}
	if want := 1 + rounds*inFlight; len(leader) != want { // the generation's start record and the appends
		t.Errorf("the leader holds %d records, want %d", len(leader), want)
	}
}
