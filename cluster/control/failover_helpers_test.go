package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/netio/wire"
)

// testShardLease is L in the failover tests.
const testShardLease = 2 * time.Second

// fakeBroker is a broker on the in-memory peer network as the control
// plane sees one: it sends the heartbeats the test chooses and answers
// each FENCE with the FENCE_OK the test chose for the shard (none: the
// fence goes unanswered), noting each fence and what the store held for
// the shard when it came.
type fakeBroker struct {
	t     *testing.T
	id    cluster.Replica
	tr    *peer.Mem
	store store.Store
	seq   uint64 // of the heartbeats; the test's goroutine only

	mu     sync.Mutex
	answer map[cluster.ShardID]wire.FenceOK
	fences []seenFence
}

// seenFence is a fence a fake broker received.
type seenFence struct {
	shard      cluster.ShardID
	generation uint64
	epoch      int64
	stored     cluster.Assignment // the shard's assignment in the store when it came
}

// grantGot is a LEASE_GRANT as a fake broker read it.
type grantGot struct {
	seq    uint64
	epoch  int64
	lease  time.Duration
	shards []failover.GrantedShard
}

func newFakeBroker(t *testing.T, net *peer.Network, s store.Store, b cluster.Broker) *fakeBroker {
	t.Helper()
	tr, err := net.Join(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	fb := &fakeBroker{t: t, id: b.Replica(), tr: tr, store: s, answer: map[cluster.ShardID]wire.FenceOK{}}
	tr.Handle(peer.HandlerFunc(fb.serve))
	t.Cleanup(func() { _ = tr.Close() })
	return fb
}

// answerFences makes the broker answer the shard's fences with ok (its
// generation and epoch the fence's).
func (b *fakeBroker) answerFences(id cluster.ShardID, ok wire.FenceOK) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answer[id] = ok
}

func (b *fakeBroker) fencesSeen() []seenFence {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.fences)
}

func (b *fakeBroker) serve(_ string, req wire.Frame, r peer.Reply) {
	var f wire.Fence
	if req.Type != wire.TypeFence || f.Decode(req, wire.Limits{}) != nil {
		answerError(r, wire.CodeInvalidArgument, "a fake broker serves FENCE only")
		return
	}
	id, _ := shardOfRef(f.Log)
	seen := seenFence{shard: id, generation: f.Generation, epoch: f.Epoch}
	if kv, _, err := b.store.Get(context.Background(), AssignmentKey(id)); err == nil && kv.Exists() {
		if a, err := decodeAssignment(id, kv); err == nil {
			seen.stored = a.Assignment
		}
	}
	b.mu.Lock()
	b.fences = append(b.fences, seen)
	ok, answer := b.answer[id]
	b.mu.Unlock()
	if !answer {
		return // unanswered: the caller times out
	}
	ok.Generation, ok.Epoch, ok.DiskID = f.Generation, f.Epoch, []byte(b.id.DiskID)
	_ = r.Answer(wire.AppendFenceOK(nil, r.RequestID(), ok))
}

// heartbeat sends one heartbeat to the control plane's transport `to`
// and returns its grant, or the ERROR it was answered with.
func (b *fakeBroker) heartbeat(to string, reports ...wire.HeartbeatReport) (grantGot, error) {
	b.seq++
	req := wire.AppendHeartbeat(nil, 0, wire.Heartbeat{Seq: b.seq, Broker: []byte(b.id.Broker),
		DiskID: []byte(b.id.DiskID), Reports: reports})
	ctx, cancel := context.WithTimeout(b.t.Context(), time.Second)
	defer cancel()
	answer, err := b.tr.Call(ctx, to, req, nil)
	if err != nil {
		return grantGot{}, err
	}
	if answer.Type == wire.TypeError {
		var e wire.Error
		if err := e.Decode(answer, wire.Limits{}); err != nil {
			return grantGot{}, err
		}
		return grantGot{}, &e
	}
	var g wire.LeaseGrant
	if err := g.Decode(answer, wire.Limits{}); err != nil {
		return grantGot{}, err
	}
	got := grantGot{seq: g.HeartbeatSeq, epoch: g.Epoch, lease: time.Duration(g.LeaseNanos)}
	for _, l := range g.Logs {
		id, ok := shardOfRef(l.Log)
		if !ok {
			return grantGot{}, fmt.Errorf("a grant of log %+v", l.Log)
		}
		got.shards = append(got.shards, failover.GrantedShard{Shard: id, Generation: l.Generation})
	}
	return got, nil
}

// mustGrant is heartbeat's grant, failing the test on an error.
func (b *fakeBroker) mustGrant(to string, reports ...wire.HeartbeatReport) grantGot {
	b.t.Helper()
	g, err := b.heartbeat(to, reports...)
	if err != nil {
		b.t.Fatalf("%s's heartbeat: %v", b.id.Broker, err)
	}
	return g
}

// leadingReport is a leader's report of id at generation gen, durable to end.
func leadingReport(id cluster.ShardID, gen uint64, end int64) wire.HeartbeatReport {
	return wire.HeartbeatReport{Log: refOfShard(id), Generation: gen, Leading: true, LogEnd: end, LastGen: gen,
		Durable: end, LeaderHeard: -1}
}

// followingReport is a follower's report of id at generation gen, its leader
// heard just now.
func followingReport(id cluster.ShardID, gen uint64, end int64) wire.HeartbeatReport {
	return wire.HeartbeatReport{Log: refOfShard(id), Generation: gen, LogEnd: end, LastGen: gen, Durable: end,
		LeaderHeard: int64(10 * time.Millisecond)}
}

// cleanAt is a FENCE_OK of a replica that stopped cleanly at end, its
// last record of generation lastGen.
func cleanAt(end int64, lastGen uint64) wire.FenceOK {
	return wire.FenceOK{LogEnd: end, Durable: end, LastGen: lastGen, Flags: wire.FenceClean}
}

// failoverWorld is a control plane with a failover driver, its store, a
// peer network with the control plane's transport (cpID) and fake
// brokers b1..bn, registered, and one stream of one shard placed on
// them.
type failoverWorld struct {
	t       *testing.T
	s       *store.Memory
	net     *peer.Network
	c       *Controller
	brokers map[string]*fakeBroker
	shard   cluster.ShardID
	placed  ShardAssignment // as placement stored it
}

const cpID = "cp"

// newFailoverWorld starts it all; the Controller campaigns on cs (the
// memory store, or one wrapping it) with clock (nil: the bubble's).
func newFailoverWorld(t *testing.T, s *store.Memory, cs store.Store, clock store.Clock, n int, cfg func(*ControllerConfig)) *failoverWorld {
	t.Helper()
	w := &failoverWorld{t: t, s: s, net: peer.NewNetwork(peer.NetworkOptions{Seed: 1}), brokers: map[string]*fakeBroker{}}
	t.Cleanup(w.net.Close)
	for i := 1; i <= n; i++ {
		b := testBroker(i)
		register(t, s, b, nil)
		w.brokers[b.ID] = newFakeBroker(t, w.net, s, b)
	}
	w.c = w.startController(cs, "b1", cpID, clock, cfg)
	synctest.Wait()
	if !w.c.Status().Leading {
		t.Fatalf("the controller does not lead: %+v", w.c.Status())
	}
	w.createStream("orders", n)
	return w
}

// startController starts a controller whose peer transport joins as tr.
func (w *failoverWorld) startController(cs store.Store, id, tr string, clock store.Clock, cfg func(*ControllerConfig)) *Controller {
	w.t.Helper()
	peers, err := w.net.Join(tr)
	if err != nil {
		w.t.Fatal(err)
	}
	cc := ControllerConfig{Store: cs, ID: id, LeaseTTL: testTTL, Clock: clock, Peers: peers, ShardLease: testShardLease}
	if cfg != nil {
		cfg(&cc)
	}
	c, err := StartController(cc)
	if err != nil {
		w.t.Fatal(err)
	}
	peers.Handle(peer.HandlerFunc(c.ServeHeartbeat))
	w.t.Cleanup(func() { _ = peers.Close() })
	w.t.Cleanup(c.Close) // runs before the transport closes
	return c
}

// createStream creates a stream of one shard at rf and waits for its
// placement.
func (w *failoverWorld) createStream(name string, rf int) {
	w.t.Helper()
	if _, err := NewCatalog(CatalogConfig{Store: w.s}).CreateStream(w.t.Context(), streamID(name), streamConfig(1, rf)); err != nil {
		w.t.Fatal(err)
	}
	synctest.Wait()
	w.shard = cluster.ShardID{Object: objectOf(streamID(name))}
	w.placed = w.stored()
	if w.placed.Assignment.Leader == (cluster.Replica{}) || len(w.placed.Assignment.Replicas) != rf {
		w.t.Fatalf("placed %+v", w.placed)
	}
}

// stored is the shard's assignment in the store now.
func (w *failoverWorld) stored() ShardAssignment {
	w.t.Helper()
	kv, _, err := w.s.Get(w.t.Context(), AssignmentKey(w.shard))
	if err != nil || !kv.Exists() {
		w.t.Fatalf("the shard's assignment: %v, %v", kv, err)
	}
	a, err := decodeAssignment(w.shard, kv)
	if err != nil {
		w.t.Fatal(err)
	}
	return a
}

// history is every assignment the shard's key held after revision from,
// in order, from the store's watch.
func (w *failoverWorld) history(from int64) []ShardAssignment {
	w.t.Helper()
	ctx, cancel := context.WithCancel(w.t.Context())
	defer cancel()
	watch, err := w.s.Watch(ctx, AssignmentKey(w.shard), from+1)
	if err != nil {
		w.t.Fatal(err)
	}
	defer watch.Close()
	var out []ShardAssignment
	for {
		next, stop := context.WithCancel(ctx)
		waited := make(chan struct{})
		go func() { synctest.Wait(); stop(); close(waited) }()
		events, err := watch.Next(next)
		<-waited
		if errors.Is(err, context.Canceled) {
			return out
		}
		if err != nil {
			w.t.Fatal(err)
		}
		for _, ev := range events {
			if ev.Kind != store.EventPut {
				continue
			}
			a, err := decodeAssignment(w.shard, ev.KV)
			if err != nil {
				w.t.Fatal(err)
			}
			out = append(out, a)
		}
	}
}

// leader and followers are the fake brokers of the placed assignment.
func (w *failoverWorld) leader() *fakeBroker { return w.brokers[w.placed.Assignment.Leader.Broker] }

func (w *failoverWorld) followers() []*fakeBroker {
	var out []*fakeBroker
	for _, r := range w.placed.Assignment.Replicas {
		if r != w.placed.Assignment.Leader {
			out = append(out, w.brokers[r.Broker])
		}
	}
	return out
}

// holdingStore delays what its watches deliver while paused: a change
// the store made meanwhile reaches a watcher only once it is resumed.
type holdingStore struct {
	store.Store
	mu     sync.Mutex
	paused chan struct{} // nil: not paused
}

func (s *holdingStore) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused == nil {
		s.paused = make(chan struct{})
	}
}

func (s *holdingStore) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused != nil {
		close(s.paused)
		s.paused = nil
	}
}

func (s *holdingStore) Watch(ctx context.Context, prefix string, fromRev int64) (store.Watch, error) {
	w, err := s.Store.Watch(ctx, prefix, fromRev)
	if err != nil {
		return nil, err
	}
	return &heldWatch{Watch: w, s: s}, nil
}

type heldWatch struct {
	store.Watch
	s *holdingStore
}

func (w *heldWatch) Next(ctx context.Context) ([]store.Event, error) {
	events, err := w.Watch.Next(ctx)
	w.s.mu.Lock()
	paused := w.s.paused
	w.s.mu.Unlock()
	if paused != nil {
		select {
		case <-paused:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return events, err
}
