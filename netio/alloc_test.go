package netio

import (
	"io"
	"net"
	"testing"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// loopConn stands in for a gnet connection, driven by the test as the loop
// would: bytes in through in, answers out through out. Methods a test does
// not expect panic (the embedded interface is nil).
type loopConn struct {
	gnet.Conn
	in      []byte
	out     []byte
	ctx     any
	pending []func()
	closed  bool
}

func (f *loopConn) InboundBuffered() int { return len(f.in) }

func (f *loopConn) Peek(n int) ([]byte, error) {
	if n > len(f.in) {
		return nil, io.ErrShortBuffer
	}
	return f.in[:n], nil
}

func (f *loopConn) Discard(n int) (int, error) {
	n = min(n, len(f.in))
	f.in = f.in[n:]
	return n, nil
}

func (f *loopConn) Write(b []byte) (int, error) {
	f.out = append(f.out, b...)
	return len(b), nil
}

func (f *loopConn) OutboundBuffered() int { return 0 }

// AsyncWrite queues the write and its callback for runPending, as gnet
// runs them later on the loop.
func (f *loopConn) AsyncWrite(b []byte, cb gnet.AsyncCallback) error {
	f.pending = append(f.pending, func() {
		f.out = append(f.out, b...)
		_ = cb(f, nil)
	})
	return nil
}

func (f *loopConn) runPending() {
	for len(f.pending) > 0 {
		p := f.pending[0]
		f.pending = f.pending[1:]
		p()
	}
}

func (f *loopConn) Close() error         { f.closed = true; return nil }
func (f *loopConn) Context() any         { return f.ctx }
func (f *loopConn) SetContext(ctx any)   { f.ctx = ctx }
func (f *loopConn) RemoteAddr() net.Addr { return nil }

// loopServer is a server that is never started: tests drive its
// connections directly.
func loopServer(t testing.TB) (*Server, *engine.Engine) {
	t.Helper()
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, err := NewServer(Config{Engine: e, BrokerID: "b1"})
	if err != nil {
		t.Fatal(err)
	}
	return s, e
}

func TestPublishAllocatesNothingInSteadyState(t *testing.T) {
	s, e := loopServer(t)
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "hot"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 4}); err != nil {
		t.Fatal(err)
	}
	fc := &loopConn{}
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	recs := make([]wire.Record, 16)
	for i := range recs {
		recs[i] = wire.Record{Key: value(i), Value: make([]byte, 1024)}
	}
	frames := [][]byte{
		wire.AppendPublishBatch(nil, 2, wireRef(id), wire.AckPerBatch, recs),
		wire.AppendPublishBatch(nil, 3, wireRef(id), wire.AckPerMessage, recs),
		wire.AppendPublish(nil, 4, wireRef(id), wire.AckPerBatch, wire.Record{Value: make([]byte, 1024)}),
		wire.AppendPublish(nil, 0, wireRef(id), wire.AckNone, wire.Record{Value: make([]byte, 1024)}),
	}
	for _, frame := range frames {
		publish := func() {
			fc.in = frame
			c.traffic()
			fc.out = fc.out[:0]
		}
		for range 100 {
			publish()
		}
		if raceEnabled {
			t.Skip("allocation counts are meaningless under the race detector")
		}
		if a := testing.AllocsPerRun(500, publish); a > 0 {
			t.Errorf("%s: %.2f allocations per publish", wire.Type(uint16(frame[4])|uint16(frame[5])<<8), a)
		}
	}
}

// A publish acknowledged by a log goroutine goes out with AsyncWrite; the
// acks that arrive while one write is with gnet go out together in its
// callback.
func TestAcksFromLogGoroutinesAreCoalescedBehindOneWrite(t *testing.T) {
	s, _ := loopServer(t)
	fc := &loopConn{}
	c := newConn(s, fc)
	w := func(id uint64) *ackWaiter {
		s.work.add()
		aw := ackWaiters.Get().(*ackWaiter)
		aw.c, aw.requestID, aw.ack = c, id, wire.AckPerBatch
		return aw
	}
	w(1).Published([]engine.AckRun{{Shard: 0, First: 0, Count: 1}}, nil)
	w(2).Published([]engine.AckRun{{Shard: 0, First: 1, Count: 1}}, nil)
	w(3).Published(nil, engine.ErrStreamDeleted)
	if len(fc.pending) != 1 {
		t.Fatalf("%d writes queued, want 1", len(fc.pending))
	}
	fc.runPending()
	r := wire.Reader{}
	var types []wire.Type
	for buf := fc.out; len(buf) > 0; {
		f, _, err := r.Next(buf)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, f.Type)
		buf = buf[f.Size():]
	}
	if len(types) != 3 || types[2] != wire.TypeError {
		t.Fatalf("written %v", types)
	}
	if c.out.used() != 0 || s.work.n.Load() != 0 {
		t.Fatalf("used %d, work %d", c.out.used(), s.work.n.Load())
	}
}
