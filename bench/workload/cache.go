package workload

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/client"
)

// Cache measures a cache on the broker t: a fresh durable single-shard
// cache at s.Fsync (dropped afterwards); s.Publishers clients over
// s.Connections connections, each one operation at a time, get and put
// values of s.RecordBytes at keys drawn uniformly from c.Keys, c.GetPercent
// of the operations gets (every key is written once before the clock
// starts, so every get finds a value; Params.Extra["misses"] counts those
// that did not). s.Count bounds the operations, all clients together;
// s.Rate makes the run open-loop in operations per second. Latency runs
// from each operation's send (open-loop: its due time) to its answer.
// RoleWorkload results "cache/get" and "cache/put", for the kinds the mix
// has. Beside each: the TCP loopback request/answer of its frames' sizes
// with as many connections, and beside the puts, when t.DataDir is set,
// the disk's limit for s.Fsync with a writer per client.
func Cache(ctx context.Context, t Target, s Spec, c CacheShape, b *Baselines) ([]bench.Result, error) {
	s, c, err := cacheSpec(s, c)
	if err != nil {
		return nil, err
	}
	clients, err := t.dial(ctx, s.Connections, s.Publishers)
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	name := t.fresh("cache")
	if err := clients[0].Cache(name.Tenant, name.Namespace, name.Name).Create(ctx,
		client.CacheConfig{Shards: 1, Durable: true, Fsync: clientFsync(s.Fsync)}); err != nil {
		return nil, fmt.Errorf("felix/bench/workload: creating cache %s: %w", name, err)
	}
	defer dropCache(clients[0], name)
	ops := &brokerCache{ctx: ctx}
	for _, cl := range clients {
		ops.caches = append(ops.caches, cl.Cache(name.Tenant, name.Namespace, name.Name))
	}
	rs, err := measureCache(ctx, s, c, ops, cacheParams(s, c))
	if err != nil {
		return nil, err
	}
	for i := range rs {
		rs[i].Machine = t.machineOf()
		if err := addCacheBaselines(ctx, &rs[i], t, s, c, b); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// dropCache removes a workload's cache, on a context of its own: the
// run's may be done.
func dropCache(c *client.Client, name client.Stream) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.Cache(name.Tenant, name.Namespace, name.Name).Drop(ctx)
}

// brokerCache sends worker w's operations on connection w mod
// connections; a client pipelines the requests of its workers.
type brokerCache struct {
	ctx    context.Context
	caches []*client.Cache
}

func (o *brokerCache) get(w int, key []byte) (int, bool, error) {
	it, err := o.caches[w%len(o.caches)].Get(o.ctx, key)
	return len(it.Value), it.Found, err
}

func (o *brokerCache) put(w int, key, value []byte) error {
	_, err := o.caches[w%len(o.caches)].Put(o.ctx, key, value)
	return err
}

// Sizes of the cache frames on the wire, near enough (docs/protocol.md,
// Frame and Cache): a header; a cache ref of three names ("bench",
// "bench" and a generated name of about 25 bytes); the answers' fixed
// fields (found or existed, offset, expiry).
const (
	frameHeaderBytes  = 16
	cacheRefBytes     = 3 + 5 + 5 + 25
	cacheAnswerFixed  = 1 + 8 + 8
	cachePutOptionsLn = 1
)

// cacheFrames is about what one operation of kind puts on the wire each
// way, for values of valueBytes.
func cacheFrames(kind string, valueBytes int) (request, answer int) {
	key := uvarintBytes(cacheKeyBytes) + cacheKeyBytes
	value := uvarintBytes(valueBytes) + valueBytes
	if kind == cacheGet {
		return frameHeaderBytes + cacheRefBytes + key, frameHeaderBytes + cacheAnswerFixed + value
	}
	return frameHeaderBytes + cacheRefBytes + key + cachePutOptionsLn + value, frameHeaderBytes + cacheAnswerFixed
}

func uvarintBytes(v int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(v))
}

// addCacheBaselines sets beside r (a cache/get or cache/put result) the
// TCP request/answer of its frames with s.Publishers connections, paced
// at its share of the rate and bounded by its count; beside puts, with
// t.DataDir, the disk's limit for s.Fsync with one writer per client.
func addCacheBaselines(ctx context.Context, r *bench.Result, t Target, s Spec, c CacheShape, b *Baselines) error {
	share := c.GetPercent
	if r.Workload == cachePut {
		share = 100 - share
	}
	ts := s
	ts.Rate = s.Rate * float64(share) / 100
	if s.Count > 0 {
		ts.Count = max(1, r.Records)
	}
	req, ans := cacheFrames(r.Workload, s.RecordBytes)
	key := fmt.Sprintf("tcp %s %s rate=%g count=%d %d/%d", r.Workload, s.params(), ts.Rate, ts.Count, req, ans)
	tcp, err := b.get(key, func() (bench.Result, error) { return TCPRequestAnswer(ctx, ts, req, ans) })
	if err != nil {
		return err
	}
	r.AddBaseline("tcp", tcp)
	if r.Workload != cachePut || t.DataDir == "" {
		return nil
	}
	name, d, err := diskBaseline(ctx, b, t.DataDir, s, s.Publishers)
	if err != nil {
		return err
	}
	r.AddBaseline(name, d)
	return nil
}
