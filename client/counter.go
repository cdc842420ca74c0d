package client

import (
	"context"

	"github.com/felixbroker/felix/netio/wire"
)

// Counter is a handle on one counter: a durable sum of deltas, scoped and
// routed as a cache key (tenant, namespace, cache, key) but stored beside
// the cache's values, so a counter and a value sharing a key are
// unrelated. Counters need a durable cache on a broker with storage.
// Making a handle sends nothing. Safe for concurrent use.
//
// Adds are at least once: Add never resends, but an application that
// retries an add whose answer it lost (ErrConnectionLost, an ambiguous
// error) counts it twice when the first one had landed. Deltas carry no
// identity the broker could deduplicate them by.
type Counter struct {
	cache *Cache
	key   []byte
}

// Counter returns a handle on the counter at key in this cache.
func (ca *Cache) Counter(key string) *Counter {
	return &Counter{cache: ca, key: []byte(key)}
}

// Key is the counter's key.
func (k *Counter) Key() string { return string(k.key) }

// CounterValue is a counter as an add or a get answers it.
type CounterValue struct {
	// Exists is false for a counter never written, which is not the same
	// as a sum of zero.
	Exists bool
	// Sum is the sum of every add (for an Add, including itself).
	Sum int64
	// Offset is the counters log offset of the last add folded into Sum.
	Offset int64
}

// Add folds delta into the counter and returns the sum including it, once
// the add is acknowledged at the cache's FsyncMode. A sum that would
// overflow an int64 is refused (ErrInvalidArgument) and nothing is added.
func (k *Counter) Add(ctx context.Context, delta int64) (CounterValue, error) {
	ref := k.cache.name.ref()
	key := k.key
	f, cl, err := k.cache.client.cacheRequest(ctx, func(dst []byte, id uint64) []byte {
		return wire.AppendCounterAdd(dst, id, wire.CounterAdd{Cache: ref, Key: key, Delta: delta})
	}, ref, key, 8)
	return counterValueOf(f, cl, err)
}

// Get returns the counter's sum. It waits, if an add of the counter is in
// flight on the broker, for that add to be acknowledged.
func (k *Counter) Get(ctx context.Context) (CounterValue, error) {
	ref := k.cache.name.ref()
	key := k.key
	f, cl, err := k.cache.client.cacheRequest(ctx, func(dst []byte, id uint64) []byte {
		return wire.AppendCounterGet(dst, id, wire.CounterGet{Cache: ref, Key: key})
	}, ref, key, 0)
	return counterValueOf(f, cl, err)
}

func counterValueOf(f wire.Frame, cl *call, err error) (CounterValue, error) {
	if err != nil {
		return CounterValue{}, err
	}
	defer cl.recycle()
	var m wire.CounterValue
	if err := decodeAnswer(f, wire.TypeCounterValue, &m); err != nil {
		return CounterValue{}, err
	}
	return CounterValue{Exists: m.Exists, Sum: m.Sum, Offset: int64(m.Offset)}, nil
}
