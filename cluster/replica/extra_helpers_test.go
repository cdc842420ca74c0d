package replica

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// Helpers of the extra_*_test.go tests.

// logRecord is one record of a broker's log as it lies there.
type logRecord struct {
	offset int64
	gen    uint32
	flags  uint8
	value  string
}

// recordsOf reads every record of l, generation start records included.
func recordsOf(t *testing.T, l *shardlog.Log) []logRecord {
	t.Helper()
	var out []logRecord
	for from := l.Start(); from < l.End(); {
		b, next, err := l.Read(from, 1<<20, nil)
		if err != nil {
			t.Fatalf("reading at %d: %v", from, err)
		}
		for it := segment.NewIter(b); ; {
			rec, ok := it.Next()
			if !ok {
				break
			}
			out = append(out, logRecord{offset: rec.Offset, gen: rec.Generation, flags: uint8(rec.Flags), value: string(rec.Value)})
		}
		from = next
	}
	return out
}

// logOf reads every record of broker id's log of sid.
func (c *testCluster) logOf(id string, sid cluster.ShardID) []logRecord {
	c.t.Helper()
	return recordsOf(c.t, c.brokers[id].logs[sid])
}

// ackedRecord is a publish the cluster acknowledged.
type ackedRecord struct {
	offset int64
	value  string
}

// publishAll publishes n records named prefix-i one after the other and
// fails the test on a refusal.
func (c *testCluster) publishAll(sid cluster.ShardID, prefix string, n int) []ackedRecord {
	c.t.Helper()
	var out []ackedRecord
	for i := range n {
		v := fmt.Sprintf("%s-%d", prefix, i)
		off, err := c.publish(sid, v)
		if err != nil {
			c.t.Fatalf("publish %s: %v", v, err)
		}
		out = append(out, ackedRecord{off, v})
	}
	return out
}

// holds reports whether log holds value at offset.
func holds(log []logRecord, a ackedRecord) bool {
	for _, r := range log {
		if r.offset == a.offset {
			return r.value == a.value
		}
	}
	return false
}

// checkHeld fails the test unless broker id's log holds every record of
// acked at its offset.
func (c *testCluster) checkHeld(id string, sid cluster.ShardID, acked []ackedRecord) {
	c.t.Helper()
	log := c.logOf(id, sid)
	for _, a := range acked {
		if !holds(log, a) {
			c.t.Fatalf("%s does not hold the acknowledged record %q at offset %d: %v", id, a.value, a.offset, log)
		}
	}
}

// fenceState is broker id's durable fence of sid.
func (c *testCluster) fenceState(id string, sid cluster.ShardID) FenceState {
	return c.brokers[id].node.Follower(sid).fences.State()
}

// leaseOf is broker id's lease of sid: its generation and epoch.
func (c *testCluster) leaseOf(id string, sid cluster.ShardID) (gen uint64, epoch int64) {
	h := c.brokers[id].node.lookup(RefOf(sid))
	h.lease.mu.Lock()
	defer h.lease.mu.Unlock()
	return h.lease.generation, h.lease.epoch
}

// call sends req from cp's transport to broker id and returns the answer.
func (cp *testControl) call(to string, req []byte) (wire.Frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cp.cluster.lease)
	defer cancel()
	return cp.tr.Call(ctx, to, req, nil)
}

// awaitClosed waits for ch in fake time, failing the test past within.
func awaitClosed(t *testing.T, ch <-chan struct{}, within time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(within):
		t.Fatalf("%s did not happen within %v", what, within)
	}
}
