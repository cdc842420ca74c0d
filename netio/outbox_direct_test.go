//go:build !windows

package netio

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// directConn is a loopConn whose outbox may write to a real socket: one end
// of a socket pair, the test reading the other.
func directConn(t *testing.T) (*conn, *loopConn, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	s, _ := loopServer(t)
	fc := &loopConn{}
	c := newConn(s, fc)
	c.out.fd = fds[0]
	return c, fc, fds[1]
}

// ackInBatch has ack waiters of the connection told, as a committer does,
// with the flush's batch b: the acks wait in the outbox, deferred to b
// (once: a second ack of the same flush defers nothing more).
func ackInBatch(t *testing.T, c *conn, b *engine.AckBatch, ids ...uint64) {
	t.Helper()
	for _, id := range ids {
		c.s.work.add()
		w := ackWaiters.Get().(*ackWaiter)
		w.c, w.requestID, w.ack = c, id, wire.AckPerBatch
		w.PublishedIn(b, []engine.AckRun{{Shard: 0, First: int64(id), Count: 1}})
	}
	if c.out.used() == 0 || !c.out.batched {
		t.Fatalf("the acks did not wait in the outbox for the flush's end (used %d)", c.out.used())
	}
}

// readAcks reads what the socket holds and returns the request ids of the
// PUBLISH_ACKs in it.
func readAcks(t *testing.T, fd int) []uint64 {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	r := wire.Reader{}
	for b := buf[:n]; len(b) > 0; {
		f, need, err := r.Next(b)
		if err != nil || need > 0 || f.Type != wire.TypePublishAck {
			t.Fatalf("read %v (need %d, err %v)", f.Type, need, err)
		}
		ids = append(ids, f.RequestID)
		b = b[f.Size():]
	}
	return ids
}

// After a flush that waited for its fdatasync and answered this connection
// alone, the committer writes the flush's acks itself, in one write,
// without a hand-off to the loop.
func TestAfterASyncedFlushForOneConnectionTheCommitterWritesTheAcks(t *testing.T) {
	c, fc, peer := directConn(t)
	var b engine.AckBatch
	ackInBatch(t, c, &b, 1, 2, 3)
	c.out.FlushAcks(engine.FlushInfo{Flushers: 1, Synced: true})
	if len(fc.pending) != 0 || len(fc.out) != 0 {
		t.Fatalf("%d writes handed to the loop, %d bytes written by it", len(fc.pending), len(fc.out))
	}
	if ids := readAcks(t, peer); len(ids) != 3 || ids[0] != 1 || ids[2] != 3 {
		t.Fatalf("the socket got acks %v, want 1 2 3", ids)
	}
	if c.out.used() != 0 || c.out.batched || c.out.inflight {
		t.Fatalf("after the direct write: used %d, batched %v, inflight %v", c.out.used(), c.out.batched, c.out.inflight)
	}
}

// A socket that takes nothing right now (full) leaves the acks to gnet,
// which keeps them until it can write: nothing is lost and nothing waits.
func TestAFullSocketLeavesTheAcksToGnet(t *testing.T) {
	c, fc, _ := directConn(t)
	fill := make([]byte, 64<<10)
	for {
		if _, err := unix.Write(c.out.fd, fill); err != nil {
			break // EAGAIN: the socket is full
		}
	}
	var b engine.AckBatch
	ackInBatch(t, c, &b, 1, 2)
	c.out.FlushAcks(engine.FlushInfo{Flushers: 1, Synced: true})
	if len(fc.pending) != 1 {
		t.Fatalf("%d writes handed to gnet, want 1", len(fc.pending))
	}
	fc.runPending()
	if n := countFrames(t, fc.out); n != 2 {
		t.Fatalf("gnet got %d frames, want 2", n)
	}
}

// Otherwise the loop writes them, once: after a page-cache flush (the loop
// is not asleep yet), after a flush that answered several connections
// (their loops write alongside the committer's next flush), and whenever
// gnet still holds bytes of this connection (they must go first).
func TestOtherwiseTheLoopWritesTheFlushsAcks(t *testing.T) {
	for name, setup := range map[string]func(o *outbox) engine.FlushInfo{
		"page-cache flush":    func(*outbox) engine.FlushInfo { return engine.FlushInfo{Flushers: 1} },
		"several connections": func(*outbox) engine.FlushInfo { return engine.FlushInfo{Flushers: 2, Synced: true} },
		"gnet holds bytes": func(o *outbox) engine.FlushInfo {
			o.sock.Store(100)
			return engine.FlushInfo{Flushers: 1, Synced: true}
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, fc, _ := directConn(t)
			var b engine.AckBatch
			ackInBatch(t, c, &b, 1, 2)
			c.out.FlushAcks(setup(c.out))
			if len(fc.pending) != 1 {
				t.Fatalf("%d writes handed to the loop, want 1", len(fc.pending))
			}
			fc.runPending()
			if n := countFrames(t, fc.out); n != 2 {
				t.Fatalf("the loop wrote %d frames, want 2", n)
			}
		})
	}
}

// While a write is with gnet, or the loop is in OnTraffic, the acks join
// what is on its way and defer nothing: that write, or the loop's own
// flush, carries them.
func TestAcksJoinAWriteAlreadyOnItsWay(t *testing.T) {
	c, fc, _ := directConn(t)
	c.out.beginTraffic()
	var b engine.AckBatch
	c.s.work.add()
	w := ackWaiters.Get().(*ackWaiter)
	w.c, w.requestID, w.ack = c, 7, wire.AckPerBatch
	w.PublishedIn(&b, []engine.AckRun{{Shard: 0, First: 7, Count: 1}})
	if c.out.batched {
		t.Fatal("an ack deferred to the flush while the loop was about to write")
	}
	c.out.flushOnLoop()
	if len(fc.pending) != 0 || countFrames(t, fc.out) != 1 {
		t.Fatalf("pending %d, written %d bytes", len(fc.pending), len(fc.out))
	}
}

func countFrames(t *testing.T, b []byte) int {
	t.Helper()
	r := wire.Reader{}
	n := 0
	for len(b) > 0 {
		f, need, err := r.Next(b)
		if err != nil || need > 0 {
			t.Fatalf("frame %d: need %d, err %v", n, need, err)
		}
		b = b[f.Size():]
		n++
	}
	return n
}
