package producer

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

var sid = engine.StreamID{Tenant: "acme", Namespace: "orders", Name: "created"}

// fixture is an engine over a gated MemFS, one durable stream, and a
// Manager on a clock the test moves.
type fixture struct {
	t      testing.TB
	fs     *gateFS
	eng    *engine.Engine
	stream *engine.Stream
	m      *Manager
	now    *fakeNow
}

func newFixture(t testing.TB, shards int, opts Options) *fixture {
	t.Helper()
	f := &fixture{t: t, fs: &gateFS{FS: vfs.NewMem()}, now: &fakeNow{t: time.Unix(1_700_000_000, 0)}}
	f.open(shards, opts)
	return f
}

func (f *fixture) open(shards int, opts Options) {
	f.t.Helper()
	e, err := engine.Open(engine.Options{FS: f.fs, Dir: "/data", Fsync: shardlog.OnCommit(), Now: f.now.Now})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := e.Stream(sid); err != nil {
		if _, err := e.CreateStream(sid, engine.StreamConfig{Shards: shards, Durable: true}); err != nil {
			f.t.Fatal(err)
		}
	}
	f.eng = e
	f.stream, _ = e.Stream(sid)
	if opts.Now == nil {
		opts.Now = f.now.Now
	}
	f.m = New(e, opts)
}

// restart closes the engine and opens it again, with a new Manager: the
// broker restarted.
func (f *fixture) restart(opts Options) {
	f.t.Helper()
	if err := f.eng.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.open(f.stream.Shards(), opts)
}

func (f *fixture) close() { f.eng.Close() }

func (f *fixture) register() ID {
	f.t.Helper()
	id, err := f.m.Register()
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// send publishes and waits for the acknowledgement.
func (f *fixture) send(id ID, shard int, seq uint64, recs []engine.Record) Ack {
	f.t.Helper()
	w := newAckWaiter()
	if err := f.m.Publish(id, f.stream, shard, seq, recs, w); err != nil {
		f.t.Fatalf("batch %d: %v", seq, err)
	}
	a, err := w.wait(f.t)
	if err != nil {
		f.t.Fatalf("batch %d: %v", seq, err)
	}
	return a
}

// records returns the values on a shard, in offset order.
func (f *fixture) records(shard int) []string {
	f.t.Helper()
	sh, _ := f.stream.Shard(shard)
	var out []string
	for from := sh.Start(); from < sh.End(); {
		b, next, err := sh.Read(from, 1<<20, nil)
		if err != nil {
			f.t.Fatal(err)
		}
		it := segment.NewIter(b)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			out = append(out, string(r.Value))
		}
		from = next
	}
	return out
}

func batchOf(prefix string, n int) []engine.Record {
	recs := make([]engine.Record, n)
	for i := range recs {
		recs[i] = engine.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	return recs
}

// ackWaiter collects one batch's outcome.
type ackWaiter struct {
	done chan struct{}
	ack  Ack
	err  error
}

func newAckWaiter() *ackWaiter { return &ackWaiter{done: make(chan struct{})} }

func (w *ackWaiter) Acked(a Ack, err error) {
	w.ack, w.err = a, err
	close(w.done)
}

func (w *ackWaiter) wait(t testing.TB) (Ack, error) {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("batch never acknowledged")
	}
	return w.ack, w.err
}

func (w *ackWaiter) told() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// fakeNow is a clock the test moves.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeNow) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeNow) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// gateFS holds every write to a segment file while its gate is shut, so
// appended batches stay unacknowledged for as long as a test needs.
type gateFS struct {
	vfs.FS
	mu   sync.Mutex
	shut chan struct{} // non-nil while writes are held
}

func (g *gateFS) hold() {
	g.mu.Lock()
	g.shut = make(chan struct{})
	g.mu.Unlock()
}

func (g *gateFS) release() {
	g.mu.Lock()
	close(g.shut)
	g.shut = nil
	g.mu.Unlock()
}

func (g *gateFS) pass(name string) {
	if !strings.HasSuffix(name, segment.SegmentSuffix) {
		return
	}
	g.mu.Lock()
	ch := g.shut
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (g *gateFS) Create(name string) (vfs.File, error) {
	f, err := g.FS.Create(name)
	return g.wrap(f, err)
}

func (g *gateFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := g.FS.OpenReadWrite(name)
	return g.wrap(f, err)
}

func (g *gateFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &gateFile{File: f, g: g}, nil
}

type gateFile struct {
	vfs.File
	g *gateFS
}

func (f *gateFile) WriteAt(p []byte, off int64) (int, error) {
	f.g.pass(f.Name())
	return f.File.WriteAt(p, off)
}

func (f *gateFile) WriteAtSync(p []byte, off int64) (int, error) {
	f.g.pass(f.Name())
	return f.File.WriteAtSync(p, off)
}
