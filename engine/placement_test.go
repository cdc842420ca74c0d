package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// slot is shard i's open Shard, nil when it is not held here.
func (s *Stream) slot(i int) *Shard { return s.slots[i].Load() }

type placed struct {
	id    StreamID
	shard int
}

// fakePlacement holds the shards it was told to, and may be told again.
type fakePlacement struct {
	mu   sync.Mutex
	held map[placed]bool
}

func newPlacement() *fakePlacement { return &fakePlacement{held: map[placed]bool{}} }

func (p *fakePlacement) Holds(id StreamID, shard int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[placed{id, shard}]
}

// hold makes the shards given the ones of id this broker holds.
func (p *fakePlacement) hold(id StreamID, shards ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.held {
		if k.id == id {
			delete(p.held, k)
		}
	}
	for _, i := range shards {
		p.held[placed{id, i}] = true
	}
}

// fakeOwner leads the shards it was told to; every other shard is led by
// leader (when set).
type fakeOwner struct {
	mu     sync.Mutex
	local  map[placed]bool
	leader map[placed]string
}

func newOwner() *fakeOwner { return &fakeOwner{local: map[placed]bool{}, leader: map[placed]string{}} }

func (o *fakeOwner) Leader(id StreamID, shard int) (bool, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := placed{id, shard}
	return o.local[k], o.leader[k]
}

// lead makes this broker lead the shards given of id, and leader lead the
// others of its shards.
func (o *fakeOwner) lead(id StreamID, shards int, leader string, local ...int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range shards {
		k := placed{id, i}
		o.local[k] = slices.Contains(local, i)
		o.leader[k] = leader
		if o.local[k] {
			o.leader[k] = ""
		}
	}
}

// forwarded is one Forward call, its records copied.
type forwarded struct {
	shard int
	recs  []Record
	cred  string
}

// fakeForwarder records what it is handed and acknowledges it from
// another goroutine with offsets of its own: 100*(shard+1) onward.
type fakeForwarder struct {
	mu    sync.Mutex
	calls []forwarded
	next  map[int]int64
}

func (f *fakeForwarder) Forward(_ StreamID, shard int, recs []Record, cred []byte, w shardlog.Waiter) error {
	c := forwarded{shard: shard, cred: string(cred)}
	for _, r := range recs {
		c.recs = append(c.recs, Record{Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)})
	}
	f.mu.Lock()
	if f.next == nil {
		f.next = map[int]int64{}
	}
	first := 100*int64(shard+1) + f.next[shard]
	f.next[shard] += int64(len(recs))
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	go w.Committed(first, first+int64(len(recs))-1, nil)
	return nil
}

func (f *fakeForwarder) made() []forwarded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// closeMark is an attachment that says when it is closed.
type closeMark struct{ closed chan struct{} }

func newCloseMark() *closeMark { return &closeMark{closed: make(chan struct{})} }

func (c *closeMark) Close() error { close(c.closed); return nil }

// placedEngine opens an engine over fs whose placement and ownership the
// test sets, with an in-memory catalog it can change behind the engine's
// back.
type placedEngine struct {
	*Engine
	place *fakePlacement
	owner *fakeOwner
	cat   *FileCatalog
}

func openPlaced(t *testing.T, fs vfs.FS, fwd Forwarder) *placedEngine {
	t.Helper()
	cat, err := OpenFileCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pe := &placedEngine{place: newPlacement(), owner: newOwner(), cat: cat}
	pe.Engine, err = Open(Options{FS: fs, Dir: "/data", Fsync: shardlog.OnCommit(), SegmentBytes: 16 << 10,
		Catalog: cat, Placement: pe.place, Owner: pe.owner, Forward: fwd})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pe.Close() })
	return pe
}

// holdAndLead places and leads the shards given of id here; other brokers
// lead the others.
func (pe *placedEngine) holdAndLead(id StreamID, shards int, leader string, here ...int) {
	pe.place.hold(id, here...)
	pe.owner.lead(id, shards, leader, here...)
}

const elsewhere = "10.0.0.2:7117"

func shardDirs(t *testing.T, fs vfs.FS, id StreamID) []string {
	t.Helper()
	names, err := fs.List(streamDir("/data", id))
	if errors.Is(err, vfs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func wantDirs(t *testing.T, fs vfs.FS, id StreamID, want ...string) {
	t.Helper()
	if got := shardDirs(t, fs, id); !slices.Equal(got, want) {
		t.Fatalf("%s has shard directories %v, want %v", id, got, want)
	}
}

func wantNotLeader(t *testing.T, what string, err error, shard int, leader string) {
	t.Helper()
	var nl *NotLeaderError
	if !errors.As(err, &nl) || !errors.Is(err, ErrNotLeader) || nl.Shard != shard || nl.Leader != leader {
		t.Fatalf("%s: %v; want a *NotLeaderError for shard %d naming %q", what, err, shard, leader)
	}
}

// waitEnd returns the error sub ends with.
func waitEnd(t *testing.T, sub *Subscription) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, err := sub.Next(ctx, nil, 1<<20)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("the subscription never ended")
		}
		if err != nil {
			return err
		}
	}
}

func waitClosed(t *testing.T, c *closeMark) {
	t.Helper()
	select {
	case <-c.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the attachment was never closed")
	}
}

// values reads shard sh from its start and returns its records' values.
func values(t *testing.T, sh *Shard) []string {
	t.Helper()
	var out []string
	for from := sh.Start(); from < sh.End(); {
		b, next, err := sh.Read(from, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		it := segment.NewIter(b)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			out = append(out, string(r.Value))
		}
		from = next
	}
	return out
}

// A broker that holds shards 1 and 3 of a four-shard stream opens only
// their logs: only their directories exist, only they are in Stats, and
// every operation on another shard is refused naming its leader; Shards
// and routing still count four. Opened again it holds the same; opened
// with the default placement (Alone) it opens every shard, as before.
func TestOnlyTheShardsThisBrokerHoldsAreOpened(t *testing.T) {
	mem := vfs.NewMem()
	pe := openPlaced(t, mem, nil)
	pe.holdAndLead(sid, 4, elsewhere, 1, 3)
	if _, err := pe.CreateStream(sid, StreamConfig{Shards: 4, Durable: true}); err != nil {
		t.Fatal(err)
	}
	wantDirs(t, mem, sid, "shard-0001", "shard-0003")
	s, _ := pe.Stream(sid)
	if s.Shards() != 4 || s.Held(0) || !s.Held(1) || s.Held(2) || !s.Held(3) || s.Held(4) {
		t.Fatalf("%d shards, held %v %v %v %v", s.Shards(), s.Held(0), s.Held(1), s.Held(2), s.Held(3))
	}
	sh, err := s.Shard(0)
	wantNotLeader(t, "Shard(0)", err, 0, elsewhere)
	if sh != nil {
		t.Fatal("Shard(0) returned a shard with its refusal")
	}
	if _, err := s.Shard(4); !errors.Is(err, ErrNoShard) || !strings.Contains(err.Error(), "has 4 shards (0 to 3), not shard 4") {
		t.Fatalf("Shard(4): %v, want no such shard saying which there are", err)
	}
	_, err = s.AppendToShard(2, []Record{rec(keyFor(t, 2, 4), 0)}, nil)
	wantNotLeader(t, "AppendToShard(2)", err, 2, elsewhere)

	// Ownership may call a shard local a moment before its log opens here.
	pe.owner.lead(sid, 4, "", 1, 2, 3)
	_, err = s.AppendToShard(2, []Record{rec(keyFor(t, 2, 4), 0)}, nil)
	wantNotLeader(t, "AppendToShard(2) led but not held", err, 2, "")
	err = s.Publish([]Record{rec(keyFor(t, 2, 4), 0)}, newWaiter())
	wantNotLeader(t, "a publish to shard 2 led but not held", err, 2, "")

	publish(t, s, rec(keyFor(t, 1, 4), 1), rec(keyFor(t, 3, 4), 3))
	var shards []int
	for _, st := range pe.Stats() {
		shards = append(shards, st.Shard)
	}
	if slices.Sort(shards); !slices.Equal(shards, []int{1, 3}) {
		t.Fatalf("Stats lists shards %v, want [1 3]", shards)
	}

	pe.Close()
	again, err := Open(Options{FS: mem, Dir: "/data", Catalog: pe.cat, Placement: pe.place, Owner: pe.owner})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = again.Stream(sid)
	if s.Held(0) || !s.Held(1) || s.Held(2) || !s.Held(3) || s.slot(1).End() != 1 || s.slot(3).End() != 1 {
		t.Fatalf("reopened: held %v %v %v %v", s.Held(0), s.Held(1), s.Held(2), s.Held(3))
	}
	again.Close()
	wantDirs(t, mem, sid, "shard-0001", "shard-0003")

	alone, err := Open(Options{FS: mem, Dir: "/data", Catalog: pe.cat})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	s, _ = alone.Stream(sid)
	for i := range 4 {
		if _, err := s.Shard(i); err != nil {
			t.Fatalf("alone, shard %d: %v", i, err)
		}
	}
	wantDirs(t, mem, sid, "shard-0000", "shard-0001", "shard-0002", "shard-0003")
}

// spanningBatch is two records for each of the four shards, interleaved.
func spanningBatch(t *testing.T) []Record {
	var batch []Record
	for i := range 8 {
		batch = append(batch, rec(keyFor(t, i%4, 4), i))
	}
	return batch
}

// A keyed publish whose records span held shards and shards led elsewhere
// is acknowledged once, with one AckRun per shard in shard order: the held
// shards' parts land here, the others' go to the Forwarder (with the
// client's credential) and carry the offsets it answered. Without a
// Forwarder the same publish is refused whole, and nothing is appended.
func TestAPublishSpanningHeldAndForwardedShards(t *testing.T) {
	fwd := &fakeForwarder{}
	pe := openPlaced(t, vfs.NewMem(), fwd)
	pe.holdAndLead(sid, 4, elsewhere, 1, 3)
	pe.CreateStream(sid, StreamConfig{Shards: 4, Durable: true})
	s, _ := pe.Stream(sid)
	w := newWaiter()
	if err := s.PublishFrom(spanningBatch(t), w, nil, []byte("token")); err != nil {
		t.Fatal(err)
	}
	runs := w.wait(t)
	want := []AckRun{{Shard: 0, First: 100, Count: 2}, {Shard: 1, First: 0, Count: 2},
		{Shard: 2, First: 300, Count: 2}, {Shard: 3, First: 0, Count: 2}}
	if !slices.Equal(runs, want) {
		t.Fatalf("runs %+v, want %+v", runs, want)
	}
	calls := fwd.made()
	if len(calls) != 2 || calls[0].shard != 0 || calls[1].shard != 2 {
		t.Fatalf("forwarded %+v, want shards 0 and 2", calls)
	}
	for _, c := range calls {
		if c.cred != "token" || len(c.recs) != 2 || string(c.recs[0].Value) != fmt.Sprint("v", c.shard) ||
			string(c.recs[1].Value) != fmt.Sprint("v", c.shard+4) {
			t.Fatalf("forwarded to shard %d: %+v with %q", c.shard, c.recs, c.cred)
		}
	}
	if got := values(t, s.slot(1)); !slices.Equal(got, []string{"v1", "v5"}) {
		t.Fatalf("shard 1 holds %v", got)
	}

	alone := openPlaced(t, vfs.NewMem(), nil)
	alone.holdAndLead(sid, 4, elsewhere, 1, 3)
	alone.CreateStream(sid, StreamConfig{Shards: 4, Durable: true})
	s, _ = alone.Stream(sid)
	err := s.PublishFrom(spanningBatch(t), newWaiter(), nil, []byte("token"))
	wantNotLeader(t, "a spanning publish with no Forwarder", err, 0, elsewhere)
	// Nor does a batch whose first shard is held land in part.
	err = s.Publish(spanningBatch(t)[1:3], newWaiter())
	wantNotLeader(t, "a publish to shards 1 and 2 with no Forwarder", err, 2, elsewhere)
	for _, i := range []int{1, 3} {
		if runs := publish(t, s, rec(keyFor(t, i, 4), 9)); runs[0].First != 0 {
			t.Fatalf("shard %d: the next record landed at %d: a refused publish appended", i, runs[0].First)
		}
	}
}

// Reconcile follows the placement and the catalog as they change: a shard
// newly held opens (its directory appears), one no longer held stops (its
// subscriptions end naming the leader, its attachments close) and keeps
// its files, so held again it serves what it had; a stream created in the
// catalog behind the engine's back is added, one deleted there is stopped
// and its directory removed.
func TestReconcileFollowsThePlacementAndTheCatalog(t *testing.T) {
	mem := vfs.NewMem()
	pe := openPlaced(t, mem, nil)
	pe.holdAndLead(sid, 4, elsewhere, 1, 3)
	pe.CreateStream(sid, StreamConfig{Shards: 4, Durable: true})
	s, _ := pe.Stream(sid)
	for i := range 5 {
		publish(t, s, rec(keyFor(t, 1, 4), i), rec(keyFor(t, 3, 4), 10+i))
	}
	sub3, _ := s.slot(3).Subscribe(SubscribeOptions{Start: StartLatest})
	mark3 := newCloseMark()
	s.slot(3).Attach(mark3)
	sub1, _ := s.slot(1).Subscribe(SubscribeOptions{Start: StartEarliest})

	pe.holdAndLead(sid, 4, "10.0.0.3:7117", 0, 1)
	if err := pe.Reconcile(); err != nil {
		t.Fatal(err)
	}
	wantDirs(t, mem, sid, "shard-0000", "shard-0001", "shard-0003")
	if !s.Held(0) || s.Held(3) {
		t.Fatalf("after the move: shard 0 held %v, shard 3 held %v", s.Held(0), s.Held(3))
	}
	wantNotLeader(t, "the moved shard's subscription", waitEnd(t, sub3), 3, "10.0.0.3:7117")
	waitClosed(t, mark3)
	_, err := s.Shard(3)
	wantNotLeader(t, "Shard(3) after the move", err, 3, "10.0.0.3:7117")
	if runs := publish(t, s, rec(keyFor(t, 0, 4), 20)); runs[0].Shard != 0 || runs[0].First != 0 {
		t.Fatalf("the newly held shard took %+v", runs)
	}
	if names, _ := mem.List(shardDir("/data", sid, 3)); !slices.Contains(names, segment.SegmentName(0)) {
		t.Fatalf("the moved shard's files: %v", names)
	}

	pe.holdAndLead(sid, 4, "10.0.0.3:7117", 0, 1, 3)
	if err := pe.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := values(t, s.slot(3)); !slices.Equal(got, []string{"v10", "v11", "v12", "v13", "v14"}) {
		t.Fatalf("shard 3 held again holds %v", got)
	}

	other := StreamID{Tenant: "acme", Namespace: "orders", Name: "shipped"}
	pe.holdAndLead(other, 2, elsewhere, 1)
	cfg, _ := StreamConfig{Shards: 2, Durable: true}.withDefaults()
	if err := pe.cat.Create(StreamInfo{ID: other, Config: cfg, Generation: 1, Created: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	pe.cat.Delete(sid)
	if err := pe.Reconcile(); err != nil {
		t.Fatal(err)
	}
	o, err := pe.Stream(other)
	if err != nil || o.Held(0) || !o.Held(1) {
		t.Fatalf("the stream created behind the engine's back: %v", err)
	}
	wantDirs(t, mem, other, "shard-0001")
	publish(t, o, rec(keyFor(t, 1, 2), 1))
	if _, err := pe.Stream(sid); !errors.Is(err, ErrStreamNotFound) {
		t.Fatalf("the stream deleted behind the engine's back: %v", err)
	}
	if err := waitEnd(t, sub1); !errors.Is(err, ErrStreamDeleted) {
		t.Fatalf("its subscription ended with %v", err)
	}
	wantDirs(t, mem, sid)
}

// A shard whose log does not open makes Reconcile fail naming it, while
// the stream's other shards open; once the fault is gone, Reconcile opens
// it. A stream added by Reconcile with a shard that does not open is added
// all the same, with that shard not held.
func TestAShardThatDoesNotOpenIsNamedAndTriedAgain(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	pe := openPlaced(t, efs, nil)
	pe.holdAndLead(sid, 3, elsewhere, 0)
	pe.CreateStream(sid, StreamConfig{Shards: 3, Durable: true})
	other := StreamID{Tenant: "acme", Namespace: "orders", Name: "shipped"}
	cfg, _ := StreamConfig{Shards: 2, Durable: true}.withDefaults()
	pe.cat.Create(StreamInfo{ID: other, Config: cfg, Generation: 1, Created: time.Now().UTC()})
	pe.holdAndLead(other, 2, elsewhere, 0, 1)
	pe.holdAndLead(sid, 3, elsewhere, 0, 1, 2)
	efs.Inject(errorfs.Rule{Op: errorfs.Any, PathContains: "shard-0001"})

	err := pe.Reconcile()
	if !errors.Is(err, errorfs.ErrInjected) || !strings.Contains(err.Error(), sid.String()+" shard 1") ||
		!strings.Contains(err.Error(), other.String()+" shard 1") {
		t.Fatalf("Reconcile with shard 1 failing: %v", err)
	}
	s, _ := pe.Stream(sid)
	o, oerr := pe.Stream(other)
	if oerr != nil || !s.Held(0) || s.Held(1) || !s.Held(2) || !o.Held(0) || o.Held(1) {
		t.Fatalf("after the failed open: %v; held %v %v %v", oerr, s.Held(0), s.Held(1), s.Held(2))
	}
	publish(t, s, rec(keyFor(t, 2, 3), 2))

	efs.Clear()
	if err := pe.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if !s.Held(1) || !o.Held(1) {
		t.Fatal("the shards that failed are still not open")
	}
	publish(t, s, rec(keyFor(t, 1, 3), 1))
	wantDirs(t, mem, sid, "shard-0000", "shard-0001", "shard-0002")
}

// A stream another broker already took out of the catalog, still open
// here, is stopped and removed by DeleteStream all the same.
func TestDeletingAStreamTheCatalogNoLongerHas(t *testing.T) {
	mem := vfs.NewMem()
	pe := openPlaced(t, mem, nil)
	pe.holdAndLead(sid, 2, elsewhere, 0, 1)
	pe.CreateStream(sid, StreamConfig{Shards: 2, Durable: true})
	s, _ := pe.Stream(sid)
	publish(t, s, rec(keyFor(t, 0, 2), 0))
	sub, _ := s.slot(0).Subscribe(SubscribeOptions{Start: StartEarliest})
	if err := pe.cat.Delete(sid); err != nil {
		t.Fatal(err)
	}
	if err := pe.DeleteStream(sid); err != nil {
		t.Fatal(err)
	}
	if err := waitEnd(t, sub); !errors.Is(err, ErrStreamDeleted) {
		t.Fatalf("its subscription ended with %v", err)
	}
	if _, err := pe.Stream(sid); !errors.Is(err, ErrStreamNotFound) {
		t.Fatalf("after the delete: %v", err)
	}
	wantDirs(t, mem, sid)
}

// Reconcile runs while publishes, subscriptions, creates and deletes go
// on, the placement moving a shard back and forth: nothing panics, nothing
// deadlocks, and every refusal is one of the expected ones (run it with
// -race).
func TestReconcileWhileEverythingElseGoesOn(t *testing.T) {
	pe := openPlaced(t, vfs.NewMem(), &fakeForwarder{})
	pe.holdAndLead(sid, 4, elsewhere, 0, 1, 2, 3)
	pe.CreateStream(sid, StreamConfig{Shards: 4, Durable: true})
	s, _ := pe.Stream(sid)
	const rounds = 40
	done, cancel := context.WithCancel(context.Background())
	cancel()
	expected := func(err error) bool {
		return err == nil || errors.Is(err, ErrNotLeader) || errors.Is(err, ErrClosed) ||
			errors.Is(err, ErrStreamNotFound) || errors.Is(err, ErrStreamExists) || errors.Is(err, ErrStreamDeleted)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	check := func(what string, err error) {
		if !expected(err) {
			select {
			case errs <- fmt.Errorf("%s: %w", what, err):
			default:
			}
		}
	}
	wg.Go(func() {
		for i := range rounds {
			held := []int{0, 1, 2}
			if i%2 == 0 {
				held = append(held, 3)
			}
			pe.holdAndLead(sid, 4, elsewhere, held...)
			check("reconcile", pe.Reconcile())
		}
	})
	batch, key3 := spanningBatch(t), keyFor(t, 3, 4)
	wg.Go(func() {
		for i := range rounds * 5 {
			w := newWaiter()
			err := s.Publish(batch, w)
			check("publish", err)
			if err == nil {
				select {
				case <-w.done:
					check("publish acknowledged", w.err)
				case <-time.After(10 * time.Second):
					check("publish", errors.New("never acknowledged"))
					return
				}
			}
			_, err = s.AppendToShard(3, []Record{rec(key3, i)}, nil)
			check("append to shard 3", err)
		}
	})
	wg.Go(func() {
		for range rounds {
			sh, err := s.Shard(3)
			check("Shard(3)", err)
			if err != nil {
				continue
			}
			sub, err := sh.Subscribe(SubscribeOptions{Start: StartEarliest})
			check("subscribe", err)
			if err == nil {
				// Once through history and onto the live queue, or its end.
				_, err = sub.Next(done, nil, 1<<10)
				if !errors.Is(err, context.Canceled) {
					check("next", err)
				}
				sub.Close()
			}
			pe.Stats()
			pe.TenantBytes("acme")
		}
	})
	wg.Go(func() {
		other := StreamID{Tenant: "acme", Namespace: "orders", Name: "shipped"}
		pe.holdAndLead(other, 2, elsewhere, 0, 1)
		for range rounds {
			_, err := pe.CreateStream(other, StreamConfig{Shards: 2, Durable: true})
			check("create", err)
			check("delete", pe.DeleteStream(other))
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A catalog entry routing cannot use (no shards), written behind the
// engine's back, is refused by Reconcile rather than opened.
func TestReconcileRefusesAnEntryWithNoShards(t *testing.T) {
	pe := openPlaced(t, vfs.NewMem(), nil)
	pe.cat.Create(StreamInfo{ID: sid, Config: StreamConfig{Shards: 0, Durable: true}, Generation: 1})
	if err := pe.Reconcile(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Reconcile over a stream of no shards: %v", err)
	}
	if _, err := pe.Stream(sid); !errors.Is(err, ErrStreamNotFound) {
		t.Fatalf("the stream of no shards: %v", err)
	}
}
