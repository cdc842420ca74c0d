package netio

import (
	"math"
	"sync"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// The actions the cache frames ask a principal about. The resource names
// the cache in Resource.Stream.
const (
	ActionCacheRead   Action = "cache.read"   // CACHE_GET, CACHE_WATCH
	ActionCacheWrite  Action = "cache.write"  // CACHE_PUT, CACHE_DELETE
	ActionCacheCreate Action = "cache.create" // CACHE_CREATE
	ActionCacheDrop   Action = "cache.drop"   // CACHE_DROP
	ActionCounter     Action = "counter"      // COUNTER_ADD, COUNTER_GET
)

// watchEventOverheadMax is the most a CACHE_WATCH_EVENT adds to its key
// and value: the header, watch id, offset, kind, flags and the two length
// varints (at most 3 and 5 bytes). A put whose key and value would not fit
// one event is refused, so every write can be watched (and every value
// read back in one CACHE_VALUE, which carries less).
const watchEventOverheadMax = wire.HeaderSize + 8 + 8 + 1 + 1 + 3 + 5

// ttlMillisMax is the longest TTL a put may ask for: one that still fits
// a time.Duration.
const ttlMillisMax = math.MaxInt64 / int64(time.Millisecond)

func init() {
	featureHooks = append(featureHooks, cacheFeatures)
	frameHandlers[wire.TypeCacheCreate] = (*conn).cacheCreate
	frameHandlers[wire.TypeCacheDrop] = (*conn).cacheDrop
	frameHandlers[wire.TypeCacheGet] = (*conn).cacheGet
	frameHandlers[wire.TypeCachePut] = (*conn).cachePut
	frameHandlers[wire.TypeCacheDelete] = (*conn).cacheDelete
}

// cacheFeatures are the cache bits a server with a cache store offers:
// the cache, its watches (retained ones too), CACHE_DESCRIBE and, when
// the store keeps its logs on disk, counters.
func cacheFeatures(cfg *Config) wire.Features {
	if cfg.Caches == nil {
		return 0
	}
	f := wire.FeatureCache | wire.FeatureCacheWatch | wire.FeatureCacheWatchRetained | wire.FeatureCacheDescribe
	if cfg.Caches.Durable() {
		f |= wire.FeatureCounters | wire.FeatureCacheConsistency
	}
	return f
}

// cacheKey resolves the cache a keyed frame names, asks the principal,
// and returns the key's shard. A refused principal is told nothing about
// whether the cache exists.
func (c *conn) cacheKey(ref wire.CacheRef, key []byte, action Action) (*cacheHandle, int, error) {
	h, err := c.s.caches.handle(ref)
	if err != nil {
		if aerr := c.principal.Allow(action, refResource(ref)); aerr != nil {
			return nil, 0, refusal(aerr, wire.CodeForbidden)
		}
		return nil, 0, err
	}
	if err := c.principal.Allow(action, h.res); err != nil {
		return nil, 0, refusal(err, wire.CodeForbidden)
	}
	return h, h.c.ShardFor(key), nil
}

// storingKey is cacheKey for a write that keeps data (a put, a counter
// add): it also asks the quotas whether the cache's tenant may store more.
func (c *conn) storingKey(ref wire.CacheRef, key []byte, action Action) (*cacheHandle, int, *wire.Error) {
	h, shard, err := c.cacheKey(ref, key, action)
	if err != nil {
		return nil, 0, cacheToWire(err)
	}
	if werr := c.admitStore(h.res.Tenant); werr != nil {
		return nil, 0, werr
	}
	return h, shard, nil
}

func refResource(ref wire.CacheRef) Resource {
	return Resource{Tenant: string(ref.Tenant), Namespace: string(ref.Namespace), Stream: string(ref.Cache)}
}

func cacheResource(id cache.ID) Resource {
	return Resource{Tenant: id.Tenant, Namespace: id.Namespace, Stream: id.Name}
}

// cacheGet handles CACHE_GET. A get runs on the loop when no write of its
// shard is in flight (then it cannot wait for one; see shardGate), and on
// a worker otherwise; one of a Quorum cache whose key's newest write is
// not committed yet (refused no_quorum, its outcome unknown) goes to a
// worker too, which parks it on the shard rather than wait (a cacheJob's
// ReadWait): no loop and no worker ever waits for a Quorum commit. A
// shard another broker leads is forwarded to it (Config.Forwarder), or
// else not_leader: never a miss. Loop only.
func (c *conn) cacheGet(f wire.Frame) { c.cacheGetOnce(f, true) }

// cacheGetOnce is cacheGet; mayRedo allows one more try when the cache
// turns out dropped and a cache of its name exists again (see redo).
func (c *conn) cacheGetOnce(f wire.Frame, mayRedo bool) {
	var m wire.CacheGet
	if err := m.Decode(f, c.s.cfg.Limits); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	h, shard, err := c.cacheKey(m.Cache, m.Key, ActionCacheRead)
	if err == nil {
		if c.forwarded(f, h, shard) {
			return
		}
		err = c.s.caches.leads(h, shard)
	}
	if err != nil {
		c.answer(f.RequestID, cacheToWire(err))
		return
	}
	if g := &h.gates[shard]; g.beginRead() {
		buf := valueBufs.Get().(*valueBuf)
		item, wait, err := h.c.GetAsync(m.Key, buf.b[:0], nil)
		g.endRead()
		if wait { // a Quorum commit to wait for: parked by a worker
			valueBufs.Put(buf)
			c.offloadJob(f.RequestID, jobGet, h, m.Key, 0)
			return
		}
		if err != nil && mayRedo && c.s.caches.redo(h, err) {
			valueBufs.Put(buf)
			c.cacheGetOnce(f, false)
			return
		}
		c.sendCacheValue(f.RequestID, item, err)
		buf.keep(item.Value)
		valueBufs.Put(buf)
		return
	}
	c.offloadJob(f.RequestID, jobGet, h, m.Key, 0)
}

// offloadJob hands an operation to a cache worker, as a unit of work Stop
// waits for. Loop only.
func (c *conn) offloadJob(requestID uint64, kind cacheJobKind, h *cacheHandle, key []byte, delta int64) {
	if !c.s.admit() {
		c.answer(requestID, errShuttingDown)
		return
	}
	j := newCacheJob(kind, c, requestID, h, key)
	j.delta = delta
	if !c.s.caches.offload(j) {
		j.release()
		c.answer(requestID, errCacheOverloaded)
	}
}

// cachePut handles CACHE_PUT: the store checks ownership and the
// condition and copies key and value into the shard's log before PutAsync
// returns; the answer comes when the write is acknowledged at the cache's
// FsyncMode. The last frame of a socket read has the loop write the
// shard's queued records itself when the log allows (see writeHereBytes):
// then the answer is in the read's own write. Loop only.
func (c *conn) cachePut(f wire.Frame) { c.cachePutOnce(f, true) }

func (c *conn) cachePutOnce(f wire.Frame, mayRedo bool) {
	var m wire.CachePut
	if err := m.Decode(f, c.s.cfg.Limits); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	h, shard, werr := c.storingKey(m.Cache, m.Key, ActionCacheWrite)
	if werr != nil {
		c.answer(f.RequestID, werr)
		return
	}
	opts, werr := c.putOptions(&m)
	if werr != nil {
		c.answer(f.RequestID, werr)
		return
	}
	if c.forwarded(f, h, shard) {
		return
	}
	w, ok := c.beginWrite(f.RequestID, h, shard)
	if !ok {
		return
	}
	if err := h.c.PutAsyncHere(m.Key, m.Value, opts, w, c.writeHereBytes(f)); err != nil {
		if mayRedo && c.s.caches.redo(h, err) {
			w.withdraw()
			c.cachePutOnce(f, false)
			return
		}
		w.refused(err)
	}
}

// cacheDelete handles CACHE_DELETE like a put. A key with no live value
// appends nothing and is answered at once: existed 0, offset 2^64-1 (-1).
// Loop only.
func (c *conn) cacheDelete(f wire.Frame) { c.cacheDeleteOnce(f, true) }

func (c *conn) cacheDeleteOnce(f wire.Frame, mayRedo bool) {
	var m wire.CacheDelete
	if err := m.Decode(f, c.s.cfg.Limits); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	h, shard, err := c.cacheKey(m.Cache, m.Key, ActionCacheWrite)
	if err != nil {
		c.answer(f.RequestID, cacheToWire(err))
		return
	}
	if c.forwarded(f, h, shard) {
		return
	}
	w, ok := c.beginWrite(f.RequestID, h, shard)
	if !ok {
		return
	}
	if err := h.c.DeleteAsyncHere(m.Key, cacheCondition(m.Condition), w, c.writeHereBytes(f)); err != nil {
		if mayRedo && c.s.caches.redo(h, err) {
			w.withdraw()
			c.cacheDeleteOnce(f, false)
			return
		}
		w.refused(err)
	}
}

// writeHereBytes is PutAsyncHere's maxBytes for a write frame f: for the
// last whole frame of the socket read, flushHereBytes (the same bound as a
// read's publishes); the loop then
// writes the record (and whatever else is queued in the shard's log) to
// the page cache itself when the log's committer is idle and no fdatasync
// is owed, and the answer leaves in the read's own write, with no hand-off
// to the committer and back (a wake of it, then an AsyncWrite and an
// eventfd wake of the loop). An earlier frame of the read gets 0: the
// committer is woken, and takes what the rest of the read appends too.
// Loop only (f not yet discarded).
func (c *conn) writeHereBytes(f wire.Frame) int {
	if c.gc.InboundBuffered() > f.Size() {
		return 0
	}
	return flushHereBytes
}

// putOptions checks a put's expiry and size and turns it into the store's
// options.
func (c *conn) putOptions(m *wire.CachePut) (cache.PutOptions, *wire.Error) {
	lim := c.s.cfg.Limits.FrameBytesMax
	if len(m.Key)+len(m.Value) > lim-watchEventOverheadMax {
		return cache.PutOptions{}, &wire.Error{Code: wire.CodeLimitExceeded,
			Message: "a value must fit in one CACHE_WATCH_EVENT frame with its key to be watchable",
			Details: wire.Details{Limit: wire.LimitFrameBytes, LimitValue: uint64(lim)}}
	}
	o := cache.PutOptions{Cond: cacheCondition(m.Condition)}
	switch m.Expiry.Kind {
	case wire.ExpireAfter:
		if m.Expiry.TTLMillis == 0 || m.Expiry.TTLMillis > uint64(ttlMillisMax) {
			return o, fieldError("ttl", "must be 1 ms or more and fit 64-bit nanoseconds")
		}
		o.TTL = time.Duration(m.Expiry.TTLMillis) * time.Millisecond
	case wire.ExpireAt:
		if m.Expiry.At <= 0 {
			return o, fieldError("expires_at", "must be a positive unix time in nanoseconds")
		}
		o.ExpiresAt = m.Expiry.At
	}
	return o, nil
}

// cacheCondition is the store's condition for the wire's. An expected
// offset past what an i64 holds can never be a key's offset.
func cacheCondition(w wire.Condition) cache.Condition {
	return cache.Condition{Kind: cache.CondKind(w.Kind), Offset: int64(min(w.Offset, math.MaxInt64))}
}

// beginWrite counts a write as work Stop waits for and as in flight on its
// shard's gate, and returns its waiter; ok is false (and the request
// answered) once Stop has begun. Loop only.
func (c *conn) beginWrite(requestID uint64, h *cacheHandle, shard int) (*cacheWriteWaiter, bool) {
	if !c.s.admit() {
		c.answer(requestID, errShuttingDown)
		return nil, false
	}
	g := &h.gates[shard]
	g.enterWrite()
	w := cacheWriteWaiters.Get().(*cacheWriteWaiter)
	w.c, w.requestID, w.gate = c, requestID, g
	return w, true
}

// cacheWriteWaiter answers one put or delete when the store acknowledges
// it. Pooled: a write in steady state allocates nothing.
type cacheWriteWaiter struct {
	c         *conn
	requestID uint64
	gate      *shardGate
}

var cacheWriteWaiters = sync.Pool{New: func() any { return new(cacheWriteWaiter) }}

// CacheWritten runs on the shard log's committer once the write is
// visible (or on the loop, for a delete that appended nothing).
func (w *cacheWriteWaiter) CacheWritten(res cache.Written, err error) {
	w.gate.leaveWrite()
	if err != nil {
		w.c.sendError(w.requestID, cacheToWire(err))
	} else {
		w.c.sendCacheWritten(w.requestID, res)
	}
	w.release()
}

// refused answers a write the store refused before appending anything.
func (w *cacheWriteWaiter) refused(err error) {
	w.c.answer(w.requestID, cacheToWire(err))
	w.withdraw()
}

// withdraw ends a write the store refused, without an answer (the request
// is tried again).
func (w *cacheWriteWaiter) withdraw() {
	w.gate.leaveWrite()
	w.release()
}

func (w *cacheWriteWaiter) release() {
	s := w.c.s
	*w = cacheWriteWaiter{}
	cacheWriteWaiters.Put(w)
	s.work.done()
}

// valueBuf is a get's scratch for the value on its way to the outbox.
type valueBuf struct{ b []byte }

const valueBufKeepBytes = 64 << 10

var valueBufs = sync.Pool{New: func() any { return &valueBuf{b: make([]byte, 0, 4<<10)} }}

// keep holds on to the buffer a get appended to, unless it grew large.
func (v *valueBuf) keep(b []byte) {
	if b != nil && cap(b) <= valueBufKeepBytes {
		v.b = b[:0]
	}
}

func (c *conn) sendCacheValue(requestID uint64, item cache.Item, err error) {
	if err != nil {
		c.sendError(requestID, cacheToWire(err))
		return
	}
	v := wire.CacheValue{Found: item.Found, ExpiresAt: item.ExpiresAt, Value: item.Value}
	if item.Found {
		v.Offset = uint64(item.Offset)
	}
	b := c.out.begin()
	c.out.commit(wire.AppendCacheValue(b, requestID, v))
}

// sendCacheWritten answers a write. A delete that appended nothing has
// offset -1, which the wire's u64 carries as 2^64-1.
func (c *conn) sendCacheWritten(requestID uint64, res cache.Written) {
	b := c.out.begin()
	c.out.commit(wire.AppendCacheWritten(b, requestID, wire.CacheWritten{
		Existed: res.Existed, Offset: uint64(res.Offset), ExpiresAt: res.ExpiresAt}))
}

// cacheCreate handles CACHE_CREATE; creating a cache opens its shards'
// logs, so it runs on a goroutine of its own and answers from there. Loop
// only.
func (c *conn) cacheCreate(f wire.Frame) {
	var m wire.CacheCreate
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	id := cacheIDOf(m.Cache)
	if err := c.principal.Allow(ActionCacheCreate, cacheResource(id)); err != nil {
		c.answer(f.RequestID, refusal(err, wire.CodeForbidden))
		return
	}
	cfg := cacheConfig(m.Config)
	if !c.s.admit() {
		c.answer(f.RequestID, errShuttingDown)
		return
	}
	go func() {
		defer c.s.work.done()
		if _, err := c.s.caches.store.Create(id, cfg); err != nil {
			c.sendError(f.RequestID, cacheToWire(err))
			return
		}
		c.sendOK(f.RequestID)
	}()
}

// cacheDrop handles CACHE_DROP: the store ends the cache's watches and
// removes its files, on a goroutine of its own. Loop only.
func (c *conn) cacheDrop(f wire.Frame) {
	var m wire.CacheDrop
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	id := cacheIDOf(m.Cache)
	if err := c.principal.Allow(ActionCacheDrop, cacheResource(id)); err != nil {
		c.answer(f.RequestID, refusal(err, wire.CodeForbidden))
		return
	}
	if !c.s.admit() {
		c.answer(f.RequestID, errShuttingDown)
		return
	}
	go func() {
		defer c.s.work.done()
		err := c.s.caches.store.Drop(id)
		c.s.caches.forget(id)
		if err != nil {
			c.sendError(f.RequestID, cacheToWire(err))
			return
		}
		c.sendOK(f.RequestID)
	}()
}

func cacheIDOf(ref wire.CacheRef) cache.ID {
	return cache.ID{Tenant: string(ref.Tenant), Namespace: string(ref.Namespace), Name: string(ref.Cache)}
}

// cacheConfig is the store's config for CACHE_CREATE's; the store fills
// the defaults and checks the rest.
func cacheConfig(w wire.CacheConfig) cache.Config {
	return cache.Config{
		Shards: int(min(w.Shards, math.MaxInt32)), Durable: w.Durable, ReplicationFactor: int(min(w.ReplicationFactor, math.MaxInt32)),
		Fsync:       engine.FsyncSetting{Kind: string(w.Fsync.Kind), Interval: time.Duration(w.Fsync.IntervalMillis) * time.Millisecond},
		Consistency: engine.Consistency(w.Consistency),
	}
}
