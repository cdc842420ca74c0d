package netio

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// gatedFS holds every write and sync of a shard's files while its gate is
// shut, so acknowledgements stay in flight as long as a test wants.
type gatedFS struct {
	vfs.FS
	g *gate
}

type gate struct {
	mu      sync.Mutex
	shut    bool
	open    chan struct{}
	blocked atomic.Int32
}

func (g *gate) close() {
	g.mu.Lock()
	g.shut, g.open = true, make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) release() {
	g.mu.Lock()
	if g.shut {
		g.shut = false
		close(g.open)
	}
	g.mu.Unlock()
}

func (g *gate) pass(name string) {
	if !strings.Contains(name, "shard-") {
		return
	}
	g.mu.Lock()
	shut, open := g.shut, g.open
	g.mu.Unlock()
	if shut {
		g.blocked.Add(1)
		<-open
	}
}

func (f gatedFS) Create(name string) (vfs.File, error) { return f.wrap(f.FS.Create(name)) }
func (f gatedFS) OpenReadWrite(name string) (vfs.File, error) {
	return f.wrap(f.FS.OpenReadWrite(name))
}

func (f gatedFS) wrap(file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return gatedFile{File: file, g: f.g}, nil
}

type gatedFile struct {
	vfs.File
	g *gate
}

func (f gatedFile) WriteAt(p []byte, off int64) (int, error) {
	f.g.pass(f.Name())
	return f.File.WriteAt(p, off)
}

func (f gatedFile) WriteAtSync(p []byte, off int64) (int, error) {
	f.g.pass(f.Name())
	return f.File.WriteAtSync(p, off)
}

func (f gatedFile) Sync() error {
	f.g.pass(f.Name())
	return f.File.Sync()
}

func TestStopEndsSubscriptionsAnswersWhatIsInFlightThenCloses(t *testing.T) {
	g := &gate{}
	e, err := engine.Open(engine.Options{FS: gatedFS{FS: vfs.NewMem(), g: g}, Dir: "/data", Fsync: shardlog.OnCommit()})
	if err != nil {
		t.Fatal(err)
	}
	b := startBrokerOn(t, e)
	t.Cleanup(g.release) // before the broker's cleanup, which runs first
	ref := wireRef(engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "durable"})
	if _, err := e.CreateStream(idOf(ref), engine.StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	sub := b.client(wire.FeaturesAll)
	s := sub.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartLatest}})
	pub := b.client(wire.FeaturesAll)

	g.close()
	const n = 50
	var frames []byte
	for i := range n {
		frames = wire.AppendPublish(frames, uint64(i+1), ref, wire.AckPerBatch, wire.Record{Value: value(i)})
	}
	pub.send(frames)
	waitUntil(t, "the broker to take every publish", func() bool { return publishFrames(b.s) == n })
	waitUntil(t, "the log to hold the writes", func() bool { return g.blocked.Load() > 0 })

	stopped := make(chan error, 1)
	go func() { stopped <- b.s.Stop(context.Background()) }()
	waitUntil(t, "Stop to begin", b.s.stopping.Load)
	pub.send(wire.AppendPublish(nil, n+1, ref, wire.AckPerBatch, wire.Record{Value: []byte("late")}))

	ended := decodeControl[wire.SubscriptionEnded](t, sub.read())
	if ended.SubscriptionID != s.SubscriptionID || ended.Code != wire.CodeShuttingDown {
		t.Fatalf("ended %+v", ended)
	}
	// The late publish is refused at once; the held ones wait for the log.
	pub.expectError(wire.CodeShuttingDown, n+1)
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) with acknowledgements in flight", err)
	default:
	}
	g.release()
	acked := map[uint64]bool{}
	for range n {
		f := pub.read()
		ackOf(t, f)
		acked[f.RequestID] = true
	}
	if len(acked) != n {
		t.Fatalf("%d distinct acks", len(acked))
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	pub.expectClosed()
	sub.expectClosed()
	m := b.s.Metrics()
	if m.ConnectionsActive.Load() != 0 || m.OutboundBuffered.Load() != 0 || m.SubscriptionsActive.Load() != 0 {
		t.Fatalf("left behind: %d connections, %d bytes for sockets, %d subscriptions",
			m.ConnectionsActive.Load(), m.OutboundBuffered.Load(), m.SubscriptionsActive.Load())
	}
}

func publishFrames(s *Server) int {
	n := 0
	for _, ci := range s.Connections() {
		n += int(ci.PublishBinary)
	}
	return n
}

func TestStopOnABrokerWithNothingToDoReturns(t *testing.T) {
	b := startBroker(t)
	b.client(wire.FeaturesAll)
	if err := b.s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.s.Stop(context.Background()); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}
