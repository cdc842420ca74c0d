package replica

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
)

// batchRecorder is a connection's side of the acknowledgements: each
// waiter it hands out defers one write per batch (as netio's outbox
// does), and it records, in order, what it was told.
type batchRecorder struct {
	mu      sync.Mutex
	events  []string // "ack" per CommittedIn, "flush" per FlushAcks
	infos   []shardlog.FlushInfo
	pending bool // a write is deferred to the current batch
	plain   int  // Committed calls without a batch, errors among them
}

type batchWaiter struct {
	r    *batchRecorder
	done chan error
}

func (w batchWaiter) Committed(_, _ int64, err error) {
	w.r.mu.Lock()
	w.r.plain++
	w.r.mu.Unlock()
	w.done <- err
}

func (w batchWaiter) CommittedIn(b *shardlog.AckBatch, _, _ int64) {
	w.r.mu.Lock()
	w.r.events = append(w.r.events, "ack")
	defer_ := !w.r.pending
	w.r.pending = true
	w.r.mu.Unlock()
	if defer_ {
		b.Defer(w.r)
	}
	w.done <- nil
}

func (r *batchRecorder) FlushAcks(f shardlog.FlushInfo) {
	r.mu.Lock()
	r.events = append(r.events, "flush")
	r.infos = append(r.infos, f)
	r.pending = false
	r.mu.Unlock()
}

// The appends one follower's answer commits are told in one batch: each
// waiter is told with the batch, and the write it deferred runs once,
// after them all, as a replicated flush (on no log's committer), so a
// connection's acknowledgements leave in one write rather than one each.
func TestTheAppendsOneAnswerCommitsAreAcknowledgedInOneBatch(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		c.timeout = 10 * time.Second // the appends wait out the cut and the catch-up
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		if _, err := c.publish(sid, "before"); err != nil {
			t.Fatal(err)
		}
		leader := c.leader(sid)
		ld := c.brokers[leader].node.Leader(sid)
		var followers []string
		for _, id := range abc {
			if id != leader {
				followers = append(followers, id)
			}
		}
		c.net.Freeze(followers[0]) // held, not lost: each slot's batch is answered once thawed
		c.net.Freeze(followers[1])
		// The first DefaultInflight appends fill the follower's slots, one
		// batch each; the rest wait, and leave in the batches the freed
		// slots carry, each answer committing several.
		const n = 2 * DefaultInflight
		r := &batchRecorder{}
		done := make(chan error, n)
		for i := range n {
			e := []shardlog.Entry{{Value: []byte{byte(i)}, Timestamp: time.Now().UnixNano()}}
			if _, err := ld.Append(e, 0, batchWaiter{r: r, done: done}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // durable on the leader, waiting for a follower
		c.net.Thaw(followers[0])
		for range n {
			if err := <-done; err != nil {
				t.Fatalf("an append: %v", err)
			}
		}
		c.net.Thaw(followers[1])
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.plain != 0 {
			t.Fatalf("%d appends told without a batch", r.plain)
		}
		flushes := 0
		for i, e := range r.events {
			if e == "flush" {
				flushes++
				continue
			}
			if i == len(r.events)-1 {
				t.Fatalf("the last acknowledgement's write was never flushed: %v", r.events)
			}
		}
		if flushes == 0 || flushes >= n {
			t.Fatalf("%d appends committed by a thawed follower were flushed %d times, want fewer than one each: %v", n, flushes, r.events)
		}
		for _, f := range r.infos {
			if !f.Replicated || f.Flushers != 1 {
				t.Fatalf("a replicated batch was told %+v, want Replicated and its one Flusher", f)
			}
		}
	})
}
