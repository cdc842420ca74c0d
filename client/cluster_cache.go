package client

import (
	"context"
)

// ClusterCache is a handle on one cache of the cluster; making it sends
// nothing. Each key's operations go to the leader of its shard
// (ShardFor(key, shards)), learned from the cache's description
// (Describe, asked once on first use and again after a not_leader or the
// loss of that leader's connection); while the leader is not known, or a
// broker does not serve CACHE_DESCRIBE, they go to the broker in use,
// which forwards them to the owner (docs/subscribe-routing.md). A broker
// that cannot be reached is passed over for the next. Writes never
// resend, as on a Cache: a failure after the write left is returned as
// is. Reads are retried under the RetryPolicy, and a read no broker could
// route is an error, never a miss.
type ClusterCache struct {
	c    *ClusterClient
	name CacheName
}

// Cache returns a handle on the cache name; its counters are
// Cache(name).Counter(key).
func (c *ClusterClient) Cache(name CacheName) *ClusterCache {
	return &ClusterCache{c: c, name: name}
}

// Name is the cache's name.
func (ca *ClusterCache) Name() CacheName { return ca.name }

// on is the single-broker handle of the cache at cl.
func (ca *ClusterCache) on(cl *Client) *Cache {
	return cl.Cache(ca.name)
}

// keyTarget is where an operation on key goes: the leader of its shard
// once the cache's shard count is known, else the broker in use.
func (ca *ClusterCache) keyTarget(ctx context.Context, key []byte) target {
	n := ca.c.shardCount(ctx, cacheObject(ca.name))
	if n == 0 {
		return anyBroker
	}
	return toCacheShard(ca.name, ShardFor(key, n))
}

// Describe returns the cache's settings and each shard's leader, as
// Cache.Describe, retried like any read, and routes by what it says.
func (ca *ClusterCache) Describe(ctx context.Context) (CacheInfo, error) {
	var info CacheInfo
	err := ca.c.run(ctx, anyBroker, resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		info, err = ca.on(cl).Describe(ctx)
		return err
	})
	if err == nil {
		leaders := make([]shardLeader, 0, len(info.Shards))
		for _, sh := range info.Shards {
			leaders = append(leaders, shardLeader{shard: sh.Shard, addr: sh.LeaderAddr})
		}
		ca.c.rememberLeaders(cacheObject(ca.name), leaders)
	}
	return info, err
}

// Create creates the cache (ErrAlreadyExists if it exists), sent again
// only after a failure that proves it was not applied.
func (ca *ClusterCache) Create(ctx context.Context, cfg CacheConfig) error {
	return ca.c.run(ctx, anyBroker, resendSafe, func(ctx context.Context, cl *Client) error {
		return ca.on(cl).Create(ctx, cfg)
	})
}

// Drop deletes the cache, sent again as Create is.
func (ca *ClusterCache) Drop(ctx context.Context) error {
	err := ca.c.run(ctx, anyBroker, resendSafe, func(ctx context.Context, cl *Client) error {
		return ca.on(cl).Drop(ctx)
	})
	ca.c.forget(cacheObject(ca.name))
	return err
}

// Get reads the key's live value, as Cache.Get, retried like any read.
func (ca *ClusterCache) Get(ctx context.Context, key []byte) (Item, error) {
	var it Item
	err := ca.c.run(ctx, ca.keyTarget(ctx, key), resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		it, err = ca.on(cl).Get(ctx, key)
		return err
	})
	return it, err
}

// write runs one cache write of key at its owner: reconnecting, never
// resending.
func (ca *ClusterCache) write(ctx context.Context, key []byte, w func(context.Context, *Cache) (Written, error)) (Written, error) {
	var out Written
	err := ca.c.run(ctx, ca.keyTarget(ctx, key), resendNever, func(ctx context.Context, cl *Client) error {
		var err error
		out, err = w(ctx, ca.on(cl))
		return err
	})
	return out, err
}

// Put writes value under key, as Cache.Put; it never resends.
func (ca *ClusterCache) Put(ctx context.Context, key, value []byte, opts ...PutOption) (Written, error) {
	return ca.write(ctx, key, func(ctx context.Context, c *Cache) (Written, error) { return c.Put(ctx, key, value, opts...) })
}

// PutIfAbsent writes value only if key has no live value, as
// Cache.PutIfAbsent.
func (ca *ClusterCache) PutIfAbsent(ctx context.Context, key, value []byte, opts ...PutOption) (Written, error) {
	return ca.write(ctx, key, func(ctx context.Context, c *Cache) (Written, error) { return c.PutIfAbsent(ctx, key, value, opts...) })
}

// PutIfOffset writes value only if key's value is still at offset, as
// Cache.PutIfOffset.
func (ca *ClusterCache) PutIfOffset(ctx context.Context, key, value []byte, offset int64, opts ...PutOption) (Written, error) {
	return ca.write(ctx, key, func(ctx context.Context, c *Cache) (Written, error) {
		return c.PutIfOffset(ctx, key, value, offset, opts...)
	})
}

// Delete removes key's value, as Cache.Delete.
func (ca *ClusterCache) Delete(ctx context.Context, key []byte) (Written, error) {
	return ca.write(ctx, key, func(ctx context.Context, c *Cache) (Written, error) { return c.Delete(ctx, key) })
}

// DeleteIfOffset removes key's value only if it is still at offset, as
// Cache.DeleteIfOffset.
func (ca *ClusterCache) DeleteIfOffset(ctx context.Context, key []byte, offset int64) (Written, error) {
	return ca.write(ctx, key, func(ctx context.Context, c *Cache) (Written, error) { return c.DeleteIfOffset(ctx, key, offset) })
}

// Watch watches a key (or, with WithPrefixOnShard, a prefix on one shard) at
// its owner, following the redirect of the broker in use; see Cache.Watch
// and ClusterWatch, which opens it again when its broker is lost.
func (ca *ClusterCache) Watch(ctx context.Context, key []byte, opts ...WatchOption) (*ClusterWatch, error) {
	return ca.openWatch(ctx, key, false, opts)
}

// WatchRetained is Watch that starts with the current values; see
// Cache.WatchRetained.
func (ca *ClusterCache) WatchRetained(ctx context.Context, key []byte, opts ...WatchOption) (*ClusterWatch, error) {
	return ca.openWatch(ctx, key, true, opts)
}

// watchTarget is where a watch of key goes: the owner of the shard it
// reads (the key's, or a prefix watch's WithPrefixOnShard), as keyTarget.
func (ca *ClusterCache) watchTarget(ctx context.Context, key []byte, opts []WatchOption) target {
	shard, prefix := prefixShard(opts)
	if !prefix {
		return ca.keyTarget(ctx, key)
	}
	if ca.c.shardCount(ctx, cacheObject(ca.name)) == 0 {
		return anyBroker
	}
	return toCacheShard(ca.name, shard)
}

func (ca *ClusterCache) watch(ctx context.Context, t target, open func(context.Context, *Cache) (*Watch, error)) (*Watch, error) {
	var w *Watch
	err := ca.c.run(ctx, t, resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		w, err = open(ctx, ca.on(cl))
		return err
	})
	return w, err
}

// ClusterCounter is a durable sum in a cache of the cluster, routed as
// the cache's keys are.
type ClusterCounter struct {
	cache *ClusterCache
	key   string
	bytes []byte // key, for routing
}

// Counter returns the counter key of the cache.
func (ca *ClusterCache) Counter(key string) *ClusterCounter {
	return &ClusterCounter{cache: ca, key: key, bytes: []byte(key)}
}

// Key is the counter's key.
func (k *ClusterCounter) Key() string { return k.key }

// Add folds delta into the counter, as Counter.Add. It never resends: an
// add is at least once only if the application resends it, and then a
// lost acknowledgement counts it twice.
func (k *ClusterCounter) Add(ctx context.Context, delta int64) (CounterValue, error) {
	var v CounterValue
	err := k.cache.c.run(ctx, k.cache.keyTarget(ctx, k.bytes), resendNever, func(ctx context.Context, cl *Client) error {
		var err error
		v, err = k.cache.on(cl).Counter(k.key).Add(ctx, delta)
		return err
	})
	return v, err
}

// Get returns the counter's sum, retried like any read.
func (k *ClusterCounter) Get(ctx context.Context) (CounterValue, error) {
	var v CounterValue
	err := k.cache.c.run(ctx, k.cache.keyTarget(ctx, k.bytes), resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		v, err = k.cache.on(cl).Counter(k.key).Get(ctx)
		return err
	})
	return v, err
}
