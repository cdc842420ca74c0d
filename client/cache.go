package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// cacheFeatures are the bits a client offers by default for caches: the
// cache, its watches (retained ones too), counters and CACHE_DESCRIBE.
const cacheFeatures = wire.FeatureCache | wire.FeatureCacheWatch | wire.FeatureCacheWatchRetained | wire.FeatureCounters |
	wire.FeatureCacheDescribe | wire.FeatureCacheConsistency

// Cache is a handle on one cache of the broker, (tenant, namespace, name):
// its keys' values (Get, Put, Delete and their conditional forms), its
// watches (Watch, WatchRetained) and its counters (Counter). Making a
// handle sends nothing; every method is one request on the client's
// connection, pipelined with the others. Safe for concurrent use.
type Cache struct {
	client *Client
	name   CacheName
}

// CacheName names a cache.
type CacheName struct {
	Tenant    string
	Namespace string
	Name      string
}

func (n CacheName) String() string { return n.Tenant + "/" + n.Namespace + "/" + n.Name }

// ref is n as the codec takes it; the slices share the strings' bytes.
func (n CacheName) ref() wire.CacheRef {
	return wire.CacheRef{Tenant: bytesOf(n.Tenant), Namespace: bytesOf(n.Namespace), Cache: bytesOf(n.Name)}
}

// Cache returns a handle on the cache name, as Stream names a stream. The
// cache must exist (Create) for its operations to succeed: an operation
// on a cache the broker does not hold fails with ErrNotFound, never as a
// miss. Its counters are Cache(name).Counter(key).
func (c *Client) Cache(name CacheName) *Cache {
	return &Cache{client: c, name: name}
}

// Name is the cache's name.
func (ca *Cache) Name() CacheName { return ca.name }

// CacheConfig is a cache's settings; zero fields take the broker's
// defaults (one shard, replication factor 1, the broker's FsyncMode), and
// the zero value is the safe choice: a durable cache.
type CacheConfig struct {
	Shards            int
	ReplicationFactor int
	// InMemory keeps the cache in the broker's memory only: its values are
	// gone after a restart, and it has no counters. The default (false)
	// keeps its log on the broker's disk, so its values survive a restart;
	// a broker without a data directory refuses that.
	InMemory bool
	// Fsync is a durable cache's FsyncMode (FsyncNone, FsyncPeriodic with
	// its interval, FsyncOnCommit); zero takes the broker's default.
	Fsync Fsync
	// Consistency is when a replicated cache's writes (puts, deletes,
	// counter adds) are acknowledged, as a stream's publishes are:
	// ConsistencyLeader (the default) once its shard's leader has them,
	// ConsistencyQuorum once a majority of the replica set does (without
	// one in the publish timeout a write answers ErrNoQuorum: it may be
	// stored). Quorum needs FeatureCacheConsistency: a broker without it
	// is not asked (ErrFeatureNotNegotiated).
	Consistency Consistency
}

func (cfg CacheConfig) wire() (wire.CacheConfig, error) {
	if cfg.Shards < 0 || cfg.Shards > math.MaxUint32 || cfg.ReplicationFactor < 0 || cfg.ReplicationFactor > math.MaxUint32 {
		return wire.CacheConfig{}, &ServerError{Code: codeInvalidArgument, Name: codeInvalidArgument.String(),
			Message: "shards and replication factor must be between 0 and 2^32-1", Local: true}
	}
	return wire.CacheConfig{Shards: uint32(cfg.Shards), ReplicationFactor: uint32(cfg.ReplicationFactor), Durable: !cfg.InMemory,
		Fsync:       wire.FsyncMode{Kind: wire.FsyncKind(cfg.Fsync.Kind), IntervalMillis: uint32(min(cfg.Fsync.Interval.Milliseconds(), math.MaxUint32))},
		Consistency: wire.Consistency(cfg.Consistency)}, nil
}

// Create creates the cache (ErrAlreadyExists if it exists).
func (ca *Cache) Create(ctx context.Context, cfg CacheConfig) error {
	wc, err := cfg.wire()
	if err != nil {
		return err
	}
	if wc.Consistency != "" && wc.Consistency != wire.ConsistencyLeader {
		s, err := ca.client.Session(ctx)
		if err != nil {
			return err
		}
		if !s.Features.Has(FeatureCacheConsistency) {
			return notNegotiated(wire.FeatureCacheConsistency)
		}
	}
	return ca.client.roundTrip(ctx, &wire.CacheCreate{Cache: ca.name.ref(), Config: wc}, nil)
}

// Drop deletes the cache with its values and counters (ErrNotFound if
// there is none). Its watches end with ErrNotFound.
func (ca *Cache) Drop(ctx context.Context) error {
	return ca.client.roundTrip(ctx, &wire.CacheDrop{Cache: ca.name.ref()}, nil)
}

// Item answers a Get. A key with no live value (never written, deleted or
// expired) is Found false.
type Item struct {
	Found bool
	// Offset is the log offset of the write that produced the value: the
	// offset PutIfOffset and DeleteIfOffset compare with.
	Offset int64
	// ExpiresAt is when the value expires; zero when it does not.
	ExpiresAt time.Time
	Value     []byte // the caller's own copy
}

// Written answers a write.
type Written struct {
	// Existed: the key held a live value before the write.
	Existed bool
	// Offset is the log offset of the record the write appended; -1 for
	// a delete of a key with no live value, which appends nothing.
	Offset int64
	// ExpiresAt is the expiry now in force; zero for none (and for a
	// delete).
	ExpiresAt time.Time
}

// PutOption adjusts a put. Options are plain values: passing them
// allocates nothing.
type PutOption struct {
	ttl time.Duration
	at  time.Time
}

// WithTTL makes the value expire d after the broker applies the put (whole
// milliseconds, at least one). The broker keeps the expiry as an absolute
// time, so one that passes while it is down has passed.
func WithTTL(d time.Duration) PutOption { return PutOption{ttl: d} }

// WithExpiresAt makes the value expire at t.
func WithExpiresAt(t time.Time) PutOption { return PutOption{at: t} }

// expiryOf folds the options; the last one given wins.
func expiryOf(opts []PutOption) (wire.Expiry, error) {
	var e wire.Expiry
	for _, o := range opts {
		switch {
		case o.ttl != 0:
			if o.ttl < time.Millisecond {
				return e, localInvalid("ttl", "a TTL is at least 1 ms")
			}
			e = wire.Expiry{Kind: wire.ExpireAfter, TTLMillis: uint64(o.ttl / time.Millisecond)}
		case !o.at.IsZero():
			e = wire.Expiry{Kind: wire.ExpireAt, At: o.at.UnixNano()}
		}
	}
	return e, nil
}

func localInvalid(field, msg string) error {
	return &ServerError{Code: codeInvalidArgument, Name: codeInvalidArgument.String(), Message: field + ": " + msg,
		Details: Details{Field: field}, Local: true}
}

// PreconditionError is a conditional write whose condition did not hold:
// PutIfAbsent over a live value, PutIfOffset or DeleteIfOffset at another
// offset. errors.Is(err, ErrPreconditionFailed) holds.
type PreconditionError struct {
	// Exists: the key holds a live value, written at Current.
	Exists  bool
	Current int64
	Err     *ServerError
}

func (e *PreconditionError) Error() string {
	if !e.Exists {
		return "felix/client: precondition failed: the key holds no value"
	}
	return fmt.Sprintf("felix/client: precondition failed: the key's value was written at offset %d", e.Current)
}

// Unwrap returns the broker's refusal.
func (e *PreconditionError) Unwrap() error { return e.Err }

// Get reads the key's live value. It waits, if a write of the key is in
// flight on the broker, for that write to be acknowledged, so it never
// returns a value a crash could take back.
func (ca *Cache) Get(ctx context.Context, key []byte) (Item, error) {
	ref := ca.name.ref()
	f, cl, err := ca.client.cacheRequest(ctx, func(dst []byte, id uint64) []byte {
		return wire.AppendCacheGet(dst, id, wire.CacheGet{Cache: ref, Key: key})
	}, ref, key, 0)
	if err != nil {
		return Item{}, err
	}
	defer cl.recycle()
	var v wire.CacheValue
	if err := decodeAnswer(f, wire.TypeCacheValue, &v); err != nil {
		return Item{}, err
	}
	it := Item{Found: v.Found}
	if v.Found {
		it.Offset, it.ExpiresAt = int64(v.Offset), timeOf(v.ExpiresAt)
		it.Value = append(make([]byte, 0, len(v.Value)), v.Value...)
	}
	return it, nil
}

// Put writes value under key, unconditionally, and waits for the
// acknowledgement at the cache's FsyncMode. It never resends: a failure
// whose outcome is unknown (ErrConnectionLost) is returned as is.
func (ca *Cache) Put(ctx context.Context, key, value []byte, opts ...PutOption) (Written, error) {
	return ca.put(ctx, key, value, wire.Condition{}, opts)
}

// PutIfAbsent writes value only if the key holds no live value; otherwise
// it fails with a *PreconditionError naming the current value's offset.
func (ca *Cache) PutIfAbsent(ctx context.Context, key, value []byte, opts ...PutOption) (Written, error) {
	return ca.put(ctx, key, value, wire.Condition{Kind: wire.CondIfAbsent}, opts)
}

// PutIfOffset writes value only if the key's live value was written at
// offset (an Item's or a Written's Offset): compare and set. Otherwise it
// fails with a *PreconditionError naming the current offset, or saying
// that the key holds no value.
func (ca *Cache) PutIfOffset(ctx context.Context, key, value []byte, offset int64, opts ...PutOption) (Written, error) {
	if offset < 0 {
		return Written{}, localInvalid("offset", "an offset is never negative")
	}
	return ca.put(ctx, key, value, wire.Condition{Kind: wire.CondIfOffset, Offset: uint64(offset)}, opts)
}

func (ca *Cache) put(ctx context.Context, key, value []byte, cond wire.Condition, opts []PutOption) (Written, error) {
	exp, err := expiryOf(opts)
	if err != nil {
		return Written{}, err
	}
	ref := ca.name.ref()
	f, cl, err := ca.client.cacheRequest(ctx, func(dst []byte, id uint64) []byte {
		return wire.AppendCachePut(dst, id, wire.CachePut{Cache: ref, Key: key, Condition: cond, Expiry: exp, Value: value})
	}, ref, key, len(value))
	return writtenOf(f, cl, err)
}

// Delete removes the key's value and waits for the acknowledgement. A key
// with no live value appends nothing: Existed false, Offset -1.
func (ca *Cache) Delete(ctx context.Context, key []byte) (Written, error) {
	return ca.del(ctx, key, wire.Condition{})
}

// DeleteIfOffset removes the key's value only if it was written at offset;
// otherwise it fails with a *PreconditionError.
func (ca *Cache) DeleteIfOffset(ctx context.Context, key []byte, offset int64) (Written, error) {
	if offset < 0 {
		return Written{}, localInvalid("offset", "an offset is never negative")
	}
	return ca.del(ctx, key, wire.Condition{Kind: wire.CondIfOffset, Offset: uint64(offset)})
}

func (ca *Cache) del(ctx context.Context, key []byte, cond wire.Condition) (Written, error) {
	ref := ca.name.ref()
	f, cl, err := ca.client.cacheRequest(ctx, func(dst []byte, id uint64) []byte {
		return wire.AppendCacheDelete(dst, id, wire.CacheDelete{Cache: ref, Key: key, Condition: cond})
	}, ref, key, 0)
	return writtenOf(f, cl, err)
}

func writtenOf(f wire.Frame, cl *call, err error) (Written, error) {
	if err != nil {
		return Written{}, preconditionOf(err)
	}
	defer cl.recycle()
	var m wire.CacheWritten
	if err := decodeAnswer(f, wire.TypeCacheWritten, &m); err != nil {
		return Written{}, err
	}
	return Written{Existed: m.Existed, Offset: int64(m.Offset), ExpiresAt: timeOf(m.ExpiresAt)}, nil
}

// preconditionOf turns the broker's precondition_failed into a
// *PreconditionError.
func preconditionOf(err error) error {
	var se *ServerError
	if !errors.As(err, &se) || se.Code != codePreconditionFailed {
		return err
	}
	pe := &PreconditionError{Current: -1, Err: se}
	if o := se.Details.Offset; o != nil {
		pe.Exists, pe.Current = true, *o
	}
	return pe
}

func timeOf(unixNano int64) time.Time {
	if unixNano == 0 {
		return time.Time{}
	}
	return time.Unix(0, unixNano)
}

// answerDecoder is a binary answer's Decode.
type answerDecoder interface {
	Decode(f wire.Frame, lim wire.Limits) error
}

// decodeAnswer decodes an answer of the type expected.
func decodeAnswer(f wire.Frame, want wire.Type, m answerDecoder) error {
	if f.Type != want {
		return fmt.Errorf("%w: %v in answer where %v was due", ErrProtocol, f.Type, want)
	}
	if err := m.Decode(f, wire.Limits{}); err != nil {
		return fmt.Errorf("%w: %v: %w", ErrProtocol, want, err)
	}
	return nil
}

// cacheRequest sends one binary cache or counter frame (enc appends it for
// a request id) and waits for the answer. It returns the answer's frame,
// whose body the call holds until the caller recycles it. The cache's
// names and the key are checked against the broker's limits first, and
// the frame's size after encoding, so nothing over a limit is sent.
func (c *Client) cacheRequest(ctx context.Context, enc func(dst []byte, id uint64) []byte,
	ref wire.CacheRef, key []byte, valueLen int) (wire.Frame, *call, error) {
	cn, err := c.conn(ctx)
	if err != nil {
		return wire.Frame{}, nil, err
	}
	if err := checkCacheKey(cn.limits, ref, key, valueLen); err != nil {
		return wire.Frame{}, nil, err
	}
	cl := newCall(true)
	buf, err := cn.beginRequest(ctx, cl)
	if err != nil {
		cl.recycle()
		return wire.Frame{}, nil, err
	}
	start := len(buf)
	buf = enc(buf, cl.id)
	if err := cn.limits.CheckFrameSize(len(buf) - start); err != nil {
		cn.w.abort(buf[:start])
		cn.drop(cl)
		cl.recycle()
		return wire.Frame{}, nil, localError(err)
	}
	cn.w.commit(buf)
	if abandoned, err := cl.wait(ctx); err != nil {
		if !abandoned {
			cl.recycle()
		}
		return wire.Frame{}, nil, err
	}
	return wire.Frame{Type: cl.ftype, RequestID: cl.id, Body: cl.body}, cl, nil
}

// checkCacheKey applies the broker's limits the encoders rely on: names
// and key lengths, and a frame that could never fit.
func checkCacheKey(lim wire.Limits, ref wire.CacheRef, key []byte, valueLen int) error {
	if err := lim.CheckCacheRef(ref); err != nil {
		return localError(err)
	}
	if err := lim.CheckKey(key); err != nil {
		return localError(err)
	}
	return localError(lim.CheckFrameSize(wire.HeaderSize + len(key) + valueLen))
}
