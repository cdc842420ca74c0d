package netio

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// backlogConn is a loopConn whose gnet backlog the test sets; it records
// the size of every write and hands the test what the outbox asks the
// loop to run.
type backlogConn struct {
	loopConn
	backlog int
	writes  []int
	probes  chan gnet.Runnable
}

func (f *backlogConn) OutboundBuffered() int { return f.backlog }

func (f *backlogConn) Write(b []byte) (int, error) {
	f.writes = append(f.writes, len(b))
	return f.loopConn.Write(b)
}

func (f *backlogConn) EventLoop() gnet.EventLoop { return probeLoop{probes: f.probes} }

// probeLoop is the EventLoop of a backlogConn: Execute hands the runnable
// to the test.
type probeLoop struct {
	gnet.EventLoop
	probes chan gnet.Runnable
}

func (l probeLoop) Execute(_ context.Context, r gnet.Runnable) error {
	l.probes <- r
	return nil
}

func backlogOutbox(t *testing.T) (*outbox, *backlogConn) {
	s, _ := loopServer(t)
	fc := &backlogConn{probes: make(chan gnet.Runnable, 4)}
	return newConn(s, fc).out, fc
}

// commitOnLoop commits n bytes as OnTraffic does: written on the way out.
func commitOnLoop(o *outbox, n int) {
	o.beginTraffic()
	b := o.begin()
	o.commit(append(b, make([]byte, n)...))
	o.flushOnLoop()
}

func (f *backlogConn) nextProbe(t *testing.T) gnet.Runnable {
	t.Helper()
	select {
	case r := <-f.probes:
		return r
	case <-time.After(waitLimit):
		t.Fatal("the outbox never asked the loop to look at gnet's backlog again")
		return nil
	}
}

// gnet copies what the socket does not take into power-of-two pieces, one
// per write: the outbox writes in pieces of writeChunkBytes, so a big
// write is copied without rounding up but for its last piece.
func TestTheOutboxWritesInPiecesGnetCopiesWithoutWaste(t *testing.T) {
	o, fc := backlogOutbox(t)
	commitOnLoop(o, 2*writeChunkBytes+100)
	if want := []int{writeChunkBytes, writeChunkBytes, 100}; !slices.Equal(fc.writes, want) {
		t.Fatalf("writes %v, want %v", fc.writes, want)
	}
}

// While gnet holds more than sockBacklogBytesMax of the connection's
// bytes, the outbox hands it nothing more and asks the loop to look again
// later; what it held goes out once gnet's backlog is down, in order.
func TestWhileGnetsBacklogIsOverItsMarkTheOutboxHoldsItsFrames(t *testing.T) {
	o, fc := backlogOutbox(t)
	fc.backlog = sockBacklogBytesMax + 1
	commitOnLoop(o, 10) // written (the backlog was last seen empty), then sampled
	commitOnLoop(o, 20) // held
	b := o.begin()
	o.commit(append(b, make([]byte, 30)...)) // from a committer: held too, no AsyncWrite
	if !slices.Equal(fc.writes, []int{10}) || len(fc.pending) != 0 || o.used() != 50+int64(fc.backlog) {
		t.Fatalf("writes %v, %d async writes, used %d", fc.writes, len(fc.pending), o.used())
	}
	_ = fc.nextProbe(t).Run(context.Background()) // gnet still backed up: held again
	if !slices.Equal(fc.writes, []int{10}) {
		t.Fatalf("written while gnet was backed up: %v", fc.writes)
	}
	fc.backlog = 0
	_ = fc.nextProbe(t).Run(context.Background())
	if !slices.Equal(fc.writes, []int{10, 50}) || o.used() != 0 || !o.flushed() {
		t.Fatalf("writes %v, used %d", fc.writes, o.used())
	}
}

// A connection that is to close gets what it was sent written whatever
// gnet's backlog (gnet's close then flushes within its own bound).
func TestAClosingConnectionWritesPastTheBacklogMark(t *testing.T) {
	o, fc := backlogOutbox(t)
	fc.backlog = sockBacklogBytesMax + 1
	commitOnLoop(o, 10)
	o.beginTraffic()
	b := o.begin()
	o.commit(append(b, make([]byte, 20)...))
	o.closeAfterFlush()
	o.flushOnLoop()
	if !slices.Equal(fc.writes, []int{10, 20}) || !fc.closed {
		t.Fatalf("writes %v, closed %v", fc.writes, fc.closed)
	}
}
