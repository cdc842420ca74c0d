package netio

import (
	"sync"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// committerConn is a loopConn whose AsyncWrite may be called from a log's
// committer: it keeps the one write handed over (the test runs it, as the
// loop would) and says so on handed, allocating nothing.
type committerConn struct {
	loopConn
	mu     sync.Mutex
	b      []byte
	cb     gnet.AsyncCallback
	handed chan struct{}
}

func (f *committerConn) AsyncWrite(b []byte, cb gnet.AsyncCallback) error {
	f.mu.Lock()
	f.b, f.cb = b, cb
	f.mu.Unlock()
	f.handed <- struct{}{}
	return nil
}

// awaitHanded waits, up to 10 seconds on deadline (a timer it resets, so
// a steady-state loop allocates none), for the committer to hand a write
// over, and runs it.
func (f *committerConn) awaitHanded(t *testing.T, deadline *time.Timer) {
	t.Helper()
	deadline.Reset(10 * time.Second)
	select {
	case <-f.handed:
	case <-deadline.C:
		t.Fatal("the publish was never acknowledged")
	}
	f.runHanded()
}

// runHanded runs the write handed over, on the test's goroutine.
func (f *committerConn) runHanded() {
	f.mu.Lock()
	b, cb := f.b, f.cb
	f.b, f.cb = nil, nil
	f.mu.Unlock()
	f.out = append(f.out, b...)
	_ = cb(f, nil)
}

// durableConn is a connection of a never-started server on an engine with
// durable streams at fsync, with HELLO done, and a one-shard durable
// stream to publish to.
func durableConn(t *testing.T, fsync shardlog.FsyncMode) (*conn, *committerConn, engine.StreamID) {
	t.Helper()
	d, err := ring.Open(ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	e, err := engine.Open(engine.Options{FS: vfs.NewOS(d), Dir: t.TempDir(), Fsync: fsync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "durable"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 1, Durable: true}); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{Engine: e, BrokerID: "b1"})
	if err != nil {
		t.Fatal(err)
	}
	fc := &committerConn{handed: make(chan struct{}, 1)}
	fc.out = make([]byte, 0, 1<<10)
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	return c, fc, id
}

// A publish to a durable stream under OnCommit, acknowledged by the log's
// committer through a flush's batch (the outbox deferred to it, its write
// handed to the loop when the flush ends), allocates nothing in steady
// state, with the committer woken once per read through the connection's
// wake list.
func TestADurablePublishAllocatesNothingInSteadyState(t *testing.T) {
	c, fc, id := durableConn(t, shardlog.OnCommit())
	frame := wire.AppendPublish(nil, 2, wireRef(id), wire.AckPerBatch, wire.Record{Value: make([]byte, 1024)})
	deadline := time.NewTimer(time.Hour)
	publish := func() {
		fc.in, fc.out = frame, fc.out[:0]
		c.traffic()
		fc.awaitHanded(t, deadline)
		if len(fc.out) == 0 {
			t.Fatal("no ack written")
		}
	}
	for range 20 {
		publish()
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	if a := testing.AllocsPerRun(100, publish); a > 0 {
		t.Errorf("%.2f allocations per durable publish", a)
	}
}

// Under Periodic the loop writes a read's publish to the page cache itself
// when the committer is idle: the ack is in the read's own write when
// traffic returns, nothing is handed over, and nothing is allocated. (A
// publish may still meet the committer awake, finishing one it took, and
// be answered by it; the test counts, and wants almost every one answered
// on the loop.)
func TestAPeriodicPublishIsAnsweredInItsReadsOwnWrite(t *testing.T) {
	c, fc, id := durableConn(t, shardlog.Periodic(time.Hour))
	frame := wire.AppendPublish(nil, 2, wireRef(id), wire.AckPerBatch, wire.Record{Value: make([]byte, 1024)})
	deadline := time.NewTimer(time.Hour)
	// publish reports whether the ack was in traffic's own write; if not,
	// it waits for the committer's.
	publish := func() bool {
		fc.in, fc.out = frame, fc.out[:0]
		c.traffic()
		r := wire.Reader{}
		if f, _, err := r.Next(fc.out); err == nil && f.Type == wire.TypePublishAck && f.Size() == len(fc.out) {
			return true
		}
		fc.awaitHanded(t, deadline)
		return false
	}
	for range 100 {
		publish()
	}
	here := 0
	for range 200 {
		if publish() {
			here++
		}
	}
	if here < 190 {
		t.Fatalf("%d of 200 publishes answered in their read's own write, want nearly all", here)
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	if a := testing.AllocsPerRun(500, func() { publish() }); a > 0 {
		t.Errorf("%.2f allocations per periodic publish", a)
	}
}
