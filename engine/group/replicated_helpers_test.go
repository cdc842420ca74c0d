package group

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// newReplicatedFixture is a fixture whose stream has a replication factor
// of 3: the engine's shard log is served by soloReplication, the group
// logs are held by fakeParts, whose leadership the test flips. It starts
// following.
func newReplicatedFixture(t testing.TB, opts Options) (*fixture, *fakeParts) {
	t.Helper()
	parts := &fakeParts{parts: map[int]*fakePart{}}
	opts.Replication = parts
	f := &fixture{t: t, fs: vfs.NewMem(), clock: newFakeClock(), owner: &switchOwner{local: true}, opts: opts,
		cfg: engine.StreamConfig{Durable: true, ReplicationFactor: 3}, rep: soloReplication{}}
	f.open()
	t.Cleanup(func() { f.eng.Close() })
	return f, parts
}

// soloReplication serves a replicated shard's log as the only replica:
// appends go to the local log, reads read it.
type soloReplication struct{}

func (soloReplication) Replicate(r engine.ReplicaLog) (engine.ReplicatedLog, error) {
	return soloLog{r.Log}, nil
}

type soloLog struct{ *shardlog.Log }

// fakeParts is a PartReplication whose one leadership (every part leads
// or follows together, at one generation) the test sets.
type fakeParts struct {
	mu      sync.Mutex
	gen     uint32
	leading bool
	below   int64
	parts   map[int]*fakePart // held now, by part number
	holds   int               // HoldPart calls that held a part
}

func (r *fakeParts) HoldPart(p engine.PartLog) (engine.Part, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.parts[p.Part] != nil {
		return nil, fmt.Errorf("part %d of %v/%d held twice", p.Part, p.ID, p.Shard)
	}
	fp := &fakePart{r: r, log: p}
	r.parts[p.Part] = fp
	r.holds++
	return fp, nil
}

// lead makes this broker the shard's leader at gen.
func (r *fakeParts) lead(gen uint32) {
	r.mu.Lock()
	r.gen, r.leading = gen, true
	r.mu.Unlock()
}

// follow ends the leadership.
func (r *fakeParts) follow() {
	r.mu.Lock()
	r.leading = false
	r.mu.Unlock()
}

func (r *fakeParts) setCompactBelow(o int64) {
	r.mu.Lock()
	r.below = o
	r.mu.Unlock()
}

// part is the held part n; the test fails when it is not held.
func (r *fakeParts) part(t testing.TB, n int) *fakePart {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.parts[n]
	if p == nil {
		t.Fatalf("part %d is not held", n)
	}
	return p
}

func (r *fakeParts) held() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.parts), r.holds
}

type fakePart struct {
	r        *fakeParts
	log      engine.PartLog
	appended atomic.Int64
}

func (p *fakePart) Leading() (uint32, bool) {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	return p.r.gen, p.r.leading
}

func (p *fakePart) Appended() { p.appended.Add(1) }

func (p *fakePart) CompactBelow() int64 {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	return p.r.below
}

func (p *fakePart) Release() {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	if p.r.parts[p.log.Part] == p {
		delete(p.r.parts, p.log.Part)
	}
}

// records reads the whole of the part's log, once what was appended to it
// is visible.
func (p *fakePart) records(t testing.TB) []segment.Record {
	t.Helper()
	if err := p.log.Log.Sync(); err != nil {
		t.Fatal(err)
	}
	return p.visible(t)
}

// visible reads what the part's log has made visible. In a synctest
// bubble, where records (whose Sync may take a pooled channel of the
// log's) must not run, synctest.Wait first.
func (p *fakePart) visible(t testing.TB) []segment.Record {
	t.Helper()
	var out []segment.Record
	err := replay(p.log.Log, func(r *segment.Record) error {
		c := *r
		c.Key, c.Value = append([]byte(nil), r.Key...), append([]byte(nil), r.Value...)
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// appendAsFollower appends entries to the part's log as a follower's
// replica does, as records another leader wrote at gen, and waits until
// they are visible.
func (p *fakePart) appendAsFollower(t testing.TB, gen uint32, entries ...shardlog.Entry) {
	t.Helper()
	l := p.log.Log
	if err := l.Sync(); err != nil { // what this replica appended when it led, visible
		t.Fatal(err)
	}
	w := &doneWaiter{done: make(chan error, 1)}
	if err := l.AppendAt(l.End(), l.LastGeneration(), entries, gen, w); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a follower's append never committed")
	}
}

type doneWaiter struct{ done chan error }

func (w *doneWaiter) Committed(_, _ int64, err error) { w.done <- err }

func cursorEntry(group string, cursor int64) shardlog.Entry {
	return shardlog.Entry{Key: []byte(group), Value: appendCursorValue(nil, cursor)}
}

func deadEntryFor(group string, ev deadEvent) shardlog.Entry {
	return shardlog.Entry{Key: []byte(group), Value: appendDeadValue(nil, &ev)}
}

// Vouch answers at once: the fake replicates at the Leader level.
func (p *fakePart) Vouch(_ uint32, first, last int64, w shardlog.Waiter) {
	w.Committed(first, last, nil)
}

// Commit bounds nothing: the Leader level.
func (p *fakePart) Commit(gen uint32) (int64, bool) {
	g, ok := p.Leading()
	return math.MaxInt64, ok && g == gen
}
