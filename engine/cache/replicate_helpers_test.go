package cache

import (
	"encoding/binary"
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

// fakeReplication is an engine.PartReplication whose leadership a test
// sets per shard (both parts follow it, as they do in a cluster), and
// whose follower a test plays by appending another leader's records.
type fakeReplication struct {
	mu    sync.Mutex
	held  map[partKey]*fakePart // the parts held now
	holds []engine.PartLog      // every HoldPart, in order
	lead  map[int]*leadership
}

type partKey struct{ shard, part int }

// leadership is a shard's answer to Leading.
type leadership struct {
	gen atomic.Uint32
	ok  atomic.Bool
}

// fakePart is one held part.
type fakePart struct {
	r        *fakeReplication
	pl       engine.PartLog
	lead     atomic.Pointer[leadership] // the shard's, or the part's own (leadsAlone)
	appended atomic.Int64               // Appended calls
	below    atomic.Int64               // what CompactBelow answers
	released atomic.Bool

	// A Quorum part's (pl.Consistency): the watermark the test set, the
	// vouches it holds, and a signal of each new one.
	qmu      sync.Mutex
	commit   int64
	held     []heldVouch
	vouching chan struct{}
}

func newFakeReplication() *fakeReplication {
	return &fakeReplication{held: map[partKey]*fakePart{}, lead: map[int]*leadership{}}
}

// leadershipOf is shard's leadership, made on first use (following).
func (r *fakeReplication) leadershipOf(shard int) *leadership {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lead[shard]
	if l == nil {
		l = &leadership{}
		r.lead[shard] = l
	}
	return l
}

func (r *fakeReplication) HoldPart(pl engine.PartLog) (engine.Part, error) {
	p := &fakePart{r: r, pl: pl, vouching: make(chan struct{}, 16)}
	p.lead.Store(r.leadershipOf(pl.Shard))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held[partKey{pl.Shard, pl.Part}] = p
	r.holds = append(r.holds, pl)
	return p, nil
}

// leads makes this broker lead shard at gen.
func (r *fakeReplication) leads(shard int, gen uint32) {
	l := r.leadershipOf(shard)
	l.gen.Store(gen)
	l.ok.Store(true)
}

// follows makes this broker a follower of shard at gen.
func (r *fakeReplication) follows(shard int, gen uint32) {
	l := r.leadershipOf(shard)
	l.ok.Store(false)
	l.gen.Store(gen)
}

// leadsAlone gives a part a leadership of its own (a secondary part its
// replica does not lead yet, adopting a follower's tail, while the
// shard's primary leads), and returns it.
func (p *fakePart) leadsAlone() *leadership {
	l := &leadership{}
	p.lead.Store(l)
	return l
}

// part is the part held now, or fails the test.
func (r *fakeReplication) part(t testing.TB, shard, part int) *fakePart {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.held[partKey{shard, part}]
	if p == nil {
		t.Fatalf("shard %d part %d is not held", shard, part)
	}
	return p
}

func (p *fakePart) Leading() (uint32, bool) {
	if p.released.Load() {
		return 0, false
	}
	l := p.lead.Load()
	return l.gen.Load(), l.ok.Load()
}

func (p *fakePart) Appended() {
	if !p.released.Load() {
		p.appended.Add(1)
	}
}

func (p *fakePart) CompactBelow() int64 { return p.below.Load() }

// Release lets go of the part; of a shard's primary, of every part of
// the shard, as the broker's replication does.
func (p *fakePart) Release() {
	p.released.Store(true)
	if p.pl.Part != engine.PartCacheValues {
		return
	}
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	for k, q := range p.r.held {
		if k.shard == p.pl.Shard {
			q.released.Store(true)
		}
	}
}

// follow appends entries to the part's log as a follower's replica does:
// at the log's end, after its last record, under gen, and waits for them
// to be acknowledged.
func (p *fakePart) follow(t testing.TB, gen uint32, entries ...shardlog.Entry) {
	t.Helper()
	l := p.pl.Log
	done := make(chan error, 1)
	first := l.Stats().Appended
	if err := l.AppendAt(first, l.LastGeneration(), entries, gen, waitFunc(func(err error) { done <- err })); err != nil {
		t.Fatalf("a follower's AppendAt at %d: %v", first, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("a follower's AppendAt at %d: %v", first, err)
	}
}

// records reads every record of the part's log.
func (p *fakePart) records(t testing.TB) []segment.Record {
	t.Helper()
	l := p.pl.Log
	var out []segment.Record
	for from := l.Start(); from < l.End(); {
		b, next, err := l.Read(from, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		it := segment.NewIter(b)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			out = append(out, r)
		}
		from = next
	}
	return out
}

type waitFunc func(err error)

func (f waitFunc) Committed(_, _ int64, err error) { f(err) }

// valueEntry is a put of key without an expiry, as a leader writes it.
func valueEntry(key, value string) shardlog.Entry {
	return shardlog.Entry{Key: []byte(key), Value: []byte(value)}
}

// addEntry is a counter add, as a leader writes it.
func addEntry(key string, delta int64) shardlog.Entry {
	return shardlog.Entry{Key: []byte(key), Value: binary.LittleEndian.AppendUint64(nil, uint64(delta))}
}

// replicatedStore opens a store on fs replicating through r, closed at
// the test's end, and creates the test cache of replication factor 3.
func replicatedStore(t *testing.T, fs vfs.FS, r *fakeReplication, cfg Config) (*Store, *Cache) {
	t.Helper()
	o := testOptions(fs, nil)
	o.Replication = r
	s := openStore(t, o)
	t.Cleanup(func() { s.Close() })
	cfg.Durable, cfg.ReplicationFactor = true, 3
	if _, err := s.Create(cid, cfg); err != nil {
		t.Fatal(err)
	}
	return s, mustCache(t, s)
}

// Vouch answers at once at the Leader level. At Quorum it holds w until
// the test commits past last (commitTo) or refuses what it holds (refuse).
func (p *fakePart) Vouch(_ uint32, first, last int64, w shardlog.Waiter) {
	if p.pl.Consistency != engine.ConsistencyQuorum {
		w.Committed(first, last, nil)
		return
	}
	p.qmu.Lock()
	if last < p.commit {
		p.qmu.Unlock()
		w.Committed(first, last, nil)
		return
	}
	p.held = append(p.held, heldVouch{first, last, w})
	p.qmu.Unlock()
	select {
	case p.vouching <- struct{}{}:
	default:
	}
}

// Commit bounds nothing at the Leader level; at Quorum it is what the test
// committed.
func (p *fakePart) Commit(gen uint32) (int64, bool) {
	g, ok := p.Leading()
	if p.pl.Consistency != engine.ConsistencyQuorum {
		return math.MaxInt64, ok && g == gen
	}
	p.qmu.Lock()
	defer p.qmu.Unlock()
	return p.commit, ok && g == gen
}

// heldVouch is a Vouch a Quorum fake holds.
type heldVouch struct {
	first, last int64
	w           shardlog.Waiter
}

// commitTo plays a Quorum leadership at gen whose watermark reached next:
// the records below it go to the part's OnCommit, and the vouches it
// passed are answered.
func (p *fakePart) commitTo(t testing.TB, gen uint32, next int64) {
	t.Helper()
	p.qmu.Lock()
	from := p.commit
	p.commit = next
	var done, keep []heldVouch
	for _, v := range p.held {
		if v.last < next {
			done = append(done, v)
		} else {
			keep = append(keep, v)
		}
	}
	p.held = keep
	p.qmu.Unlock()
	if p.pl.OnCommit != nil && next > from {
		b, got, err := p.pl.Log.Read(from, 1<<20, nil)
		if err != nil || got < next {
			t.Fatalf("reading the part's log from %d to %d: up to %d, %v", from, next, got, err)
		}
		p.pl.OnCommit(gen, from, next, b)
	}
	for _, v := range done {
		v.w.Committed(v.first, v.last, nil)
	}
}

// refuse answers every vouch held with err (no majority in time).
func (p *fakePart) refuse(err error) {
	p.qmu.Lock()
	held := p.held
	p.held = nil
	p.qmu.Unlock()
	for _, v := range held {
		v.w.Committed(v.first, v.last, err)
	}
}

// awaitVouch waits until the owner asked the part to vouch for a write
// (its log has it).
func (p *fakePart) awaitVouch(t testing.TB) {
	t.Helper()
	select {
	case <-p.vouching:
	case <-time.After(10 * time.Second):
		t.Fatal("the owner never asked the part to vouch for its write")
	}
}
