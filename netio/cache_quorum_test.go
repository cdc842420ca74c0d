package netio

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// A Quorum cache's reads over the wire never hold a loop or a worker for
// a commit: a get (or counter get, refused condition, delete of nothing)
// that must wait for a write to reach a majority is parked on its shard
// (engine/cache/park.go) and answered when the write commits, or
// no_quorum at the publish timeout; meanwhile every other connection on
// the same event loop is served. The replication is a fake whose
// followers are cut off until the test heals them (commit).

// cutOffReplication is an engine.PartReplication leading every part at
// generation 1 whose followers acknowledge nothing until heal: a Quorum
// part's vouches are held, and refused no_quorum by refuse (the publish
// timeout).
type cutOffReplication struct {
	mu    sync.Mutex
	parts []*cutOffPart
	// vouching signals each vouch held.
	vouching chan struct{}
}

func newCutOffReplication() *cutOffReplication {
	return &cutOffReplication{vouching: make(chan struct{}, 1024)}
}

type cutOffPart struct {
	r      *cutOffReplication
	pl     engine.PartLog
	commit int64 // under r.mu
	held   []cutOffVouch
}

type cutOffVouch struct {
	first, last int64
	w           shardlog.Waiter
}

func (r *cutOffReplication) HoldPart(pl engine.PartLog) (engine.Part, error) {
	p := &cutOffPart{r: r, pl: pl}
	r.mu.Lock()
	r.parts = append(r.parts, p)
	r.mu.Unlock()
	return p, nil
}

func (p *cutOffPart) Leading() (uint32, bool) { return 1, true }
func (p *cutOffPart) Appended()               {}
func (p *cutOffPart) CompactBelow() int64     { return 0 }
func (p *cutOffPart) Release()                {}

func (p *cutOffPart) Vouch(_ uint32, first, last int64, w shardlog.Waiter) {
	if p.pl.Consistency != engine.ConsistencyQuorum {
		w.Committed(first, last, nil)
		return
	}
	p.r.mu.Lock()
	if last < p.commit {
		p.r.mu.Unlock()
		w.Committed(first, last, nil)
		return
	}
	p.held = append(p.held, cutOffVouch{first, last, w})
	p.r.mu.Unlock()
	p.r.vouching <- struct{}{}
}

func (p *cutOffPart) Commit(uint32) (int64, bool) {
	if p.pl.Consistency != engine.ConsistencyQuorum {
		return 1<<63 - 1, true
	}
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	return p.commit, true
}

// awaitVouch waits until a part was asked to vouch for something.
func (r *cutOffReplication) awaitVouch(t *testing.T) {
	t.Helper()
	select {
	case <-r.vouching:
	case <-time.After(waitLimit):
		t.Fatal("no part was asked to vouch for a write")
	}
}

// heal lets the followers catch up: every part commits what its log
// holds, hands it to its OnCommit and answers the vouches it held.
func (r *cutOffReplication) heal(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	parts := append([]*cutOffPart(nil), r.parts...)
	r.mu.Unlock()
	for _, p := range parts {
		if err := p.pl.Log.Sync(); err != nil {
			t.Fatal(err)
		}
		end := p.pl.Log.End()
		r.mu.Lock()
		from := p.commit
		p.commit = max(p.commit, end)
		held := p.held
		p.held = nil
		r.mu.Unlock()
		if p.pl.OnCommit != nil && end > from {
			b, _, err := p.pl.Log.Read(from, 1<<20, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.pl.OnCommit(1, from, end, b)
		}
		for _, v := range held {
			v.w.Committed(v.first, v.last, nil)
		}
	}
}

// refuse answers every vouch held no_quorum, as a leader does at the
// publish timeout: the writes stay stored, their outcome unknown.
func (r *cutOffReplication) refuse() {
	r.mu.Lock()
	var held []cutOffVouch
	for _, p := range r.parts {
		held = append(held, p.held...)
		p.held = nil
	}
	r.mu.Unlock()
	for _, v := range held {
		v.w.Committed(v.first, v.last, errors.Join(wire.CodeNoQuorum, errors.New("no majority in time (test)")))
	}
}

// quorumCacheBroker is a broker of one event loop with a Quorum cache of
// one shard on the cut-off replication, whose reads wait at most
// quorumTimeout; "k" holds "v1" and "a" holds "b", both committed.
func quorumCacheBroker(t *testing.T, quorumTimeout time.Duration) (*cacheBroker, *cutOffReplication, wire.CacheRef) {
	t.Helper()
	r := newCutOffReplication()
	b := startCacheBroker(t, func(o *cache.Options, cfg *Config) {
		o.Replication, o.QuorumTimeout = r, quorumTimeout
		o.Fsync = shardlog.OnCommit()
		cfg.EventLoops = 1 // every connection on one loop: a held loop would stall them all
	})
	t.Cleanup(func() { r.heal(t) }) // before the broker stops: nothing left parked
	ref := b.createCache("q", cache.Config{Durable: true, ReplicationFactor: 3, Consistency: engine.ConsistencyQuorum})
	c := b.client(cacheFeaturesAll)
	for i, kv := range [][2]string{{"k", "v1"}, {"a", "b"}} {
		id := uint64(1 + i)
		c.send(wire.AppendCachePut(nil, id, wire.CachePut{Cache: ref, Key: []byte(kv[0]), Value: []byte(kv[1])}))
		r.awaitVouch(t)
		r.heal(t)
		if f := c.read(); f.RequestID != id {
			t.Fatalf("put %d answered as %d", id, f.RequestID)
		} else if w := writtenOf(t, f); w.Existed {
			t.Fatalf("the put of %s: %+v", kv[0], w)
		}
	}
	return b, r, ref
}

// refusedPut puts k=v2 with the followers cut off: it is refused
// no_quorum and stays in the leader's index, uncommitted.
func refusedPut(t *testing.T, c *rawClient, r *cutOffReplication, ref wire.CacheRef) {
	t.Helper()
	c.send(wire.AppendCachePut(nil, 100, wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("v2")}))
	r.awaitVouch(t)
	r.refuse()
	c.expectError(wire.CodeNoQuorum, 100)
}

// servedMeanwhile has other, on the same loop, get a committed key, put
// another (its answer left for the heal: the followers are cut off) and
// get the committed key again, now on a worker (a write of the shard is
// in flight), each get answered; then reader's PING is answered with
// nothing before it: what reader sent before it is still parked.
func servedMeanwhile(t *testing.T, b *cacheBroker, r *cutOffReplication, ref wire.CacheRef, reader, other *rawClient) {
	t.Helper()
	if v := valueOf(t, other.get(ref, "a")); string(v.Value) != "b" {
		t.Fatalf("another connection's get of a committed key: %+v", v)
	}
	other.send(wire.AppendCachePut(nil, 300, wire.CachePut{Cache: ref, Key: []byte("x"), Value: []byte("y")}))
	r.awaitVouch(t)
	if v := valueOf(t, other.get(ref, "a")); string(v.Value) != "b" {
		t.Fatalf("another connection's get with a write of the shard in flight: %+v", v)
	}
	if early := reader.ping(); len(early) != 0 {
		t.Fatalf("%v (request %d) answered before the PING sent after it: the read did not wait", early[0].Type, early[0].RequestID)
	}
}

// TestAParkedQuorumGetNeverHoldsItsLoop: with both followers cut off, a
// put of k is refused no_quorum and k's get waits for it, parked: another
// connection on the same event loop is served meanwhile, gets and a put of
// other keys, and the first connection's own PING is answered before its
// get. Healed, the get answers the value the refused put stored.
func TestAParkedQuorumGetNeverHoldsItsLoop(t *testing.T) {
	b, r, ref := quorumCacheBroker(t, time.Minute)
	reader, other := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	refusedPut(t, reader, r, ref)
	reader.send(wire.AppendCacheGet(nil, 200, wire.CacheGet{Cache: ref, Key: []byte("k")}))
	servedMeanwhile(t, b, r, ref, reader, other)

	r.heal(t)
	if f := reader.read(); f.RequestID != 200 {
		t.Fatalf("request %d answered, want the parked get's (200): %v", f.RequestID, decodeErr(f))
	} else if v := valueOf(t, f); !v.Found || string(v.Value) != "v2" {
		t.Fatalf("the parked get once healed: %+v, want v2 (the refused put was stored, and is committed now)", v)
	}
	if f := other.read(); f.RequestID != 300 {
		t.Fatalf("the other connection's put: request %d: %v", f.RequestID, decodeErr(f))
	} else if w := writtenOf(t, f); w.Existed {
		t.Fatalf("the other connection's put: %+v", w)
	}
}

// TestAParkedQuorumGetIsAnsweredNoQuorumAtTheTimeout: the same get with
// the followers never back is answered no_quorum once the publish timeout
// passes, the loop served all along.
func TestAParkedQuorumGetIsAnsweredNoQuorumAtTheTimeout(t *testing.T) {
	b, r, ref := quorumCacheBroker(t, 2*time.Second)
	reader, other := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	refusedPut(t, reader, r, ref)
	reader.send(wire.AppendCacheGet(nil, 200, wire.CacheGet{Cache: ref, Key: []byte("k")}))
	servedMeanwhile(t, b, r, ref, reader, other)
	reader.expectError(wire.CodeNoQuorum, 200)
}

// A refused condition and a delete of a key with no value say what the
// index holds, so with k's refused put uncommitted both wait for it,
// parked (neither is ever answered from the loop's goroutine after a
// wait): the loop is served meanwhile, and once healed the condition is
// refused naming v2's offset and the delete answered as a delete of
// nothing.
func TestAQuorumRefusedConditionAndADeleteOfNothingAreParked(t *testing.T) {
	b, r, ref := quorumCacheBroker(t, time.Minute)
	reader, other := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	refusedPut(t, reader, r, ref)
	reader.send(wire.AppendCachePut(nil, 201, wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("v3"),
		Condition: wire.Condition{Kind: wire.CondIfAbsent}}))
	reader.send(wire.AppendCacheDelete(nil, 202, wire.CacheDelete{Cache: ref, Key: []byte("absent")}))
	servedMeanwhile(t, b, r, ref, reader, other)

	r.heal(t)
	answers := map[uint64]wire.Frame{}
	for range 2 {
		f := reader.read()
		answers[f.RequestID] = f
	}
	if e := errorOf(t, answers[201], wire.CodePreconditionFailed); e.Details.Offset == nil || *e.Details.Offset != 2 {
		t.Fatalf("the refused condition once healed: %+v, want the offset of the refused put (2)", e)
	}
	if w := writtenOf(t, answers[202]); w.Existed || w.Offset != 1<<64-1 {
		t.Fatalf("the delete of nothing once healed: %+v", w)
	}
}

// Counter gets of an add not yet on a majority are parked too, however
// many: more than there are cache workers do not keep a counter get of
// another key, on another connection of the loop, from its answer.
func TestParkedQuorumCounterGetsHoldNoWorker(t *testing.T) {
	b, r, ref := quorumCacheBroker(t, time.Minute)
	reader, other := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	if v := counterOf(t, other.counterGet(ref, "warm")); v.Exists { // the counters log opens
		t.Fatalf("%+v", v)
	}
	reader.send(wire.AppendCounterAdd(nil, 100, wire.CounterAdd{Cache: ref, Key: []byte("n"), Delta: 5}))
	r.awaitVouch(t)
	const gets = 2 * cacheWorkersMax
	for i := range gets {
		reader.send(wire.AppendCounterGet(nil, uint64(1000+i), wire.CounterGet{Cache: ref, Key: []byte("n")}))
	}
	for range gets {
		r.awaitVouch(t) // each get parked on its part's vouch
	}
	if v := counterOf(t, other.counterGet(ref, "m")); v.Exists {
		t.Fatalf("another counter: %+v", v)
	}
	if early := reader.ping(); len(early) != 0 {
		t.Fatalf("%v (request %d) answered before the PING sent after it", early[0].Type, early[0].RequestID)
	}
	r.heal(t)
	for range gets + 1 {
		f := reader.read()
		if v := counterOf(t, f); v.Sum != 5 {
			t.Fatalf("request %d once healed: %+v, want a sum of 5", f.RequestID, v)
		}
	}
}

// A shard parks at most 1,024 reads: with that many gets of k parked, one
// more is refused overloaded at once, the others still parked, and
// answered once healed.
func TestAShardsParkedQuorumGetsAreBounded(t *testing.T) {
	b, r, ref := quorumCacheBroker(t, time.Minute)
	reader := b.client(cacheFeaturesAll)
	refusedPut(t, reader, r, ref)
	const parked = 1024
	var frames []byte
	for i := range parked + 1 {
		frames = wire.AppendCacheGet(frames, uint64(1000+i), wire.CacheGet{Cache: ref, Key: []byte("k")})
	}
	reader.send(frames)
	f := reader.read()
	if e := decodeErr(f); e == nil || e.Code != wire.CodeOverloaded {
		t.Fatalf("one get past the shard's bound: %v %v, want overloaded", f.Type, e)
	}
	if early := reader.ping(); len(early) != 0 {
		t.Fatalf("%v (request %d) answered before the PING: want the other gets parked", early[0].Type, early[0].RequestID)
	}
	r.heal(t)
	for range parked {
		if v := valueOf(t, reader.read()); string(v.Value) != "v2" {
			t.Fatalf("a parked get once healed: %+v", v)
		}
	}
}

// One connection parks at most 1,024 reads whatever its shards: past it
// its reads that would wait are refused overloaded, while another
// connection's still park.
func TestAConnectionsParkedQuorumGetsAreBounded(t *testing.T) {
	r := newCutOffReplication()
	b := startCacheBroker(t, func(o *cache.Options, cfg *Config) {
		o.Replication, o.QuorumTimeout = r, time.Minute
		o.Fsync = shardlog.OnCommit()
		cfg.EventLoops = 1
	})
	t.Cleanup(func() { r.heal(t) })
	ref := b.createCache("q", cache.Config{Shards: 2, Durable: true, ReplicationFactor: 3, Consistency: engine.ConsistencyQuorum})
	ca := b.cache(ref)
	keys := []string{"k0"}
	for i := 1; len(keys) < 2; i++ { // a key of the other shard
		if k := "k" + string(rune('0'+i)); ca.ShardFor([]byte(k)) != ca.ShardFor([]byte(keys[0])) {
			keys = append(keys, k)
		}
	}
	c, other := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	for i, k := range keys { // each refused no_quorum: its gets wait
		c.send(wire.AppendCachePut(nil, uint64(10+i), wire.CachePut{Cache: ref, Key: []byte(k), Value: []byte("v")}))
		r.awaitVouch(t)
	}
	r.refuse()
	for range keys {
		if e := decodeErr(c.read()); e == nil || e.Code != wire.CodeNoQuorum {
			t.Fatalf("a put with the followers cut off: %v, want no_quorum", e)
		}
	}
	const each = 600 // 1,200 in all: under each shard's 1,024, over the connection's
	var frames []byte
	for i := range 2 * each {
		frames = wire.AppendCacheGet(frames, uint64(1000+i), wire.CacheGet{Cache: ref, Key: []byte(keys[i%2])})
	}
	c.send(frames)
	refused := 0
	for {
		f := c.read()
		if f.Type == wire.TypePong {
			break
		}
		if e := decodeErr(f); e == nil || e.Code != wire.CodeOverloaded {
			t.Fatalf("a get past the connection's bound: %v %v, want overloaded", f.Type, e)
		}
		if refused++; refused == 2*each-cacheParkedPerConnMax {
			c.send(wire.AppendPing(nil, 1, 0)) // every refusal in: the rest are parked
		}
	}
	other.send(wire.AppendCacheGet(nil, 5, wire.CacheGet{Cache: ref, Key: []byte(keys[0])}))
	if early := other.ping(); len(early) != 0 {
		t.Fatalf("another connection's get: %v %v, want it parked (the bound is the first connection's)", early[0].Type, decodeErr(early[0]))
	}
	m := b.s.Metrics()
	// The pong comes from the event loop once it has handed the get on; the
	// shard parks it on its own goroutine, so the gauge may count it later.
	waitUntil(t, "the other connection's get parked", func() bool { return m.CacheReadsParked.Load() >= cacheParkedPerConnMax+1 })
	if parked, refusedN := m.CacheReadsParked.Load(), m.CacheReadsParkRefused.Load(); parked != cacheParkedPerConnMax+1 || refusedN != uint64(refused) {
		t.Fatalf("felix_cache_reads_parked %d, felix_cache_reads_park_refused_total %d; want %d and %d", parked, refusedN, cacheParkedPerConnMax+1, refused)
	}
	r.heal(t)
	for range cacheParkedPerConnMax {
		if v := valueOf(t, c.read()); string(v.Value) != "v" {
			t.Fatalf("a parked get once healed: %+v", v)
		}
	}
	if v := valueOf(t, other.read()); string(v.Value) != "v" {
		t.Fatalf("the other connection's get once healed: %+v", v)
	}
	if parked := m.CacheReadsParked.Load(); parked != 0 { // a park is given back before its answer is sent
		t.Fatalf("every parked get answered: felix_cache_reads_parked still %d", parked)
	}
}
