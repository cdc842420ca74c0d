package workload

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
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
// has. Beside each: its kind's part of the same mix run against a bare
// TCP answer server over loopback, a connection per client, frames of the
// same sizes; beside the puts, when t.DataDir is set, the disk's limit
// for s.Fsync with a writer per client.
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
	if err := clients[0].Cache(client.CacheName(name)).Create(ctx,
		client.CacheConfig{Shards: 1, Fsync: clientFsync(s.Fsync)}); err != nil {
		return nil, fmt.Errorf("felix/bench/workload: creating cache %s: %w", name, err)
	}
	defer dropCache(clients[0], name)
	ops := &brokerCache{ctx: ctx}
	for _, cl := range clients {
		ops.caches = append(ops.caches, cl.Cache(client.CacheName(name)))
	}
	rs, err := measureCache(ctx, s, c, ops, cacheParams(s, c))
	if err != nil {
		return nil, err
	}
	for i := range rs {
		rs[i].Machine = t.machineOf()
	}
	return rs, addCacheBaselines(ctx, rs, t, s, c, b)
}

// dropCache removes a workload's cache, on a context of its own: the
// run's may be done.
func dropCache(c *client.Client, name client.Stream) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.Cache(client.CacheName(name)).Drop(ctx)
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

// addCacheBaselines sets beside each result (cache/get and cache/put) its
// kind's part of the same mix against a bare TCP answer server, frames of
// the same sizes; beside the puts, with t.DataDir, the disk's limit for
// s.Fsync with one writer per client.
func addCacheBaselines(ctx context.Context, rs []bench.Result, t Target, s Spec, c CacheShape, b *Baselines) error {
	tcp, err := tcpCacheBaselines(ctx, s, c)
	if err != nil {
		return err
	}
	for i := range rs {
		rs[i].AddBaseline("tcp", tcp[rs[i].Workload])
		if rs[i].Workload != cachePut || t.DataDir == "" {
			continue
		}
		name, d, err := diskBaseline(ctx, b, t.DataDir, s, s.Publishers)
		if err != nil {
			return err
		}
		rs[i].AddBaseline(name, d)
	}
	return nil
}

// tcpCacheBaselines runs the mix of s and c, bounded by the baseline
// duration, over s.Publishers loopback connections to a bare answer
// server: RoleBaseline results "tcp/loopback", by kind.
func tcpCacheBaselines(ctx context.Context, s Spec, c CacheShape) (map[string]bench.Result, error) {
	srv, err := startAnswerServer()
	if err != nil {
		return nil, err
	}
	defer srv.close()
	conns, err := srv.dial(s.Publishers)
	if err != nil {
		return nil, err
	}
	ops := newTCPCache(conns, s.RecordBytes)
	defer ops.close()
	stop := context.AfterFunc(ctx, ops.close)
	defer stop()
	params := cacheParams(s, c)
	params.Connections = s.Publishers
	params = withExtra(params, "get_bytes", fmt.Sprintf("%d/%d", len(ops.getReq), ops.getAnswer),
		"put_bytes", fmt.Sprintf("%d/%d", len(ops.putReq), ops.putAnswer))
	return mixBaselines(ctx, s, c, ops, false, "tcp/loopback", "tcp/loopback", params)
}

// tcpCache answers the mix from a bare answer server, a connection per
// worker: a get sends a get's request and reads a value's answer, a put
// the other way round.
type tcpCache struct {
	conns                []net.Conn
	getReq, putReq       []byte
	getAnswer, putAnswer int
	answers              [][]byte // one per worker
	valueBytes           int
	closeOnce            sync.Once
}

func newTCPCache(conns []net.Conn, valueBytes int) *tcpCache {
	getReq, getAnswer := cacheFrames(cacheGet, valueBytes)
	putReq, putAnswer := cacheFrames(cachePut, valueBytes)
	o := &tcpCache{conns: conns, getReq: answerRequest(getReq, getAnswer), putReq: answerRequest(putReq, putAnswer),
		getAnswer: getAnswer, putAnswer: putAnswer, valueBytes: valueBytes}
	for range conns {
		o.answers = append(o.answers, make([]byte, max(getAnswer, putAnswer)))
	}
	return o
}

func (o *tcpCache) get(w int, _ []byte) (int, bool, error) {
	if err := o.roundTrip(w, o.getReq, o.getAnswer); err != nil {
		return 0, false, err
	}
	return o.valueBytes, true, nil
}

func (o *tcpCache) put(w int, _, _ []byte) error { return o.roundTrip(w, o.putReq, o.putAnswer) }

func (o *tcpCache) roundTrip(w int, req []byte, answer int) error {
	c := o.conns[w%len(o.conns)]
	if _, err := c.Write(req); err != nil {
		return err
	}
	_, err := io.ReadFull(c, o.answers[w%len(o.conns)][:answer])
	return err
}

func (o *tcpCache) close() {
	o.closeOnce.Do(func() {
		for _, c := range o.conns {
			c.Close()
		}
	})
}
