package workload

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// CacheKeys is how many distinct keys the cache workload writes and reads.
const CacheKeys = 10_000

// Cache measures the log-backed cache in this process, in a fresh store
// under dir: s.Publishers workers put values of s.RecordBytes round
// CacheKeys keys (each keeping s.Inflight puts unacknowledged, at
// s.Fsync), then the same workers get random keys. Beside the puts: raw
// appends of the same records to a bare shard log (log/append); beside
// the gets: raw reads of single records at random offsets of one
// (log/read). RoleWorkload results named "cache/put" and "cache/get".
func Cache(ctx context.Context, dir string, s Spec, b *Baselines) ([]bench.Result, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return nil, err
	}
	s.Batch = 1
	_, c, cleanup, err := openCache(dir, s)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	keys := cacheKeys()
	put, err := measurePuts(ctx, c, keys, s)
	if err != nil {
		return nil, err
	}
	if put.Records == 0 {
		return nil, fmt.Errorf("felix/bench/workload: cache: no put was acknowledged")
	}
	get, err := measureGets(ctx, c, keys[:min(put.Records, int64(len(keys)))], s) // the keys put
	if err != nil {
		return nil, err
	}
	machine := bench.DescribeMachine(dir)
	put.Machine, get.Machine = &machine, &machine
	appendBase, readBase, err := rawLogBaselines(ctx, dir, s)
	if err != nil {
		return nil, err
	}
	put.AddBaseline("log/append", appendBase)
	get.AddBaseline("log/read", readBase)
	return []bench.Result{put, get}, nil
}

func cacheKeys() [][]byte {
	keys := make([][]byte, CacheKeys)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%08d", i)
	}
	return keys
}

// openCache opens a store through a ring driver of s.IO in a fresh
// directory under dir and creates one durable single-shard cache at
// s.Fsync; cleanup closes everything and removes the directory.
func openCache(dir string, s Spec) (*cache.Store, *cache.Cache, func(), error) {
	d, err := ring.Open(ring.Config{Mode: s.IO})
	if err != nil {
		return nil, nil, nil, err
	}
	storeDir, err := os.MkdirTemp(dir, "felix-bench-cache-")
	if err != nil {
		d.Close()
		return nil, nil, nil, fmt.Errorf("felix/bench/workload: %w", err)
	}
	st, err := cache.Open(cache.Options{FS: vfs.NewOS(d), Dir: storeDir, Fsync: s.Fsync, PrepareSegments: true})
	if err == nil {
		_, err = st.Create(cache.ID{Tenant: "bench", Namespace: "bench", Name: "cache"},
			cache.Config{Shards: 1, Durable: true, Fsync: engineFsync(s.Fsync)})
	}
	cleanup := func() {
		if st != nil {
			st.Close()
		}
		d.Close()
		os.RemoveAll(storeDir)
	}
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	c, err := st.Cache(cache.ID{Tenant: "bench", Namespace: "bench", Name: "cache"})
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return st, c, cleanup, nil
}

func engineFsync(m shardlog.FsyncMode) engine.FsyncSetting {
	switch m.Kind {
	case shardlog.FsyncNone:
		return engine.FsyncSetting{Kind: "None"}
	case shardlog.FsyncOnCommit:
		return engine.FsyncSetting{Kind: "OnCommit"}
	}
	return engine.FsyncSetting{Kind: "Periodic", Interval: m.Interval}
}

func cacheParams(s Spec) bench.Params {
	p := s.params()
	p.Batch, p.Connections, p.Publishers, p.Writers = 0, 0, 0, s.Publishers
	p.Extra = map[string]string{"keys": strconv.Itoa(CacheKeys), "inflight": strconv.Itoa(s.Inflight)}
	return p
}

func measurePuts(ctx context.Context, c *cache.Cache, keys [][]byte, s Spec) (bench.Result, error) {
	p := &putPipe{c: c, keys: keys, value: pattern(s.RecordBytes), next: make([]int, s.Publishers),
		sent: make([]int, s.Publishers), bytes: int64(s.RecordBytes)}
	for range s.Publishers {
		ws := make([]putWaiter, s.Inflight)
		for i := range ws {
			ws[i] = make(putWaiter, 1)
		}
		p.waiters = append(p.waiters, ws)
	}
	rec := bench.NewRecorder(s.Publishers)
	stop := progress(s, "cache/put", rec)
	m, err := bench.RunPipeline(ctx, s.load(s.Publishers), s.Inflight, rec, p)
	stop()
	if err != nil {
		return bench.Result{}, err
	}
	return bench.NewResult("cache/put", bench.RoleWorkload, cacheParams(s), m), nil
}

// putPipe puts values round the keys; worker w's k-th put writes key
// (w + k*workers) mod keys.
type putPipe struct {
	c       *cache.Cache
	keys    [][]byte
	value   []byte
	waiters [][]putWaiter
	next    []int
	sent    []int
	bytes   int64
}

type putWaiter chan error

func (w putWaiter) CacheWritten(_ cache.Written, err error) { w <- err }

func (p *putPipe) Send(w int, _ time.Time) (any, error) {
	workers := len(p.waiters)
	key := p.keys[(w+p.sent[w]*workers)%len(p.keys)]
	p.sent[w]++
	ws := p.waiters[w]
	waiter := ws[p.next[w]]
	p.next[w] = (p.next[w] + 1) % len(ws)
	if err := p.c.PutAsync(key, p.value, cache.PutOptions{}, waiter); err != nil {
		return nil, err
	}
	return waiter, nil
}

func (p *putPipe) Await(_ int, pending any) (int64, int64, error) {
	if err := <-pending.(putWaiter); err != nil {
		return 0, 0, err
	}
	return 1, p.bytes, nil
}

// measureGets gets random keys from s.Publishers workers, one at a time.
func measureGets(ctx context.Context, c *cache.Cache, keys [][]byte, s Spec) (bench.Result, error) {
	bufs := make([][]byte, s.Publishers)
	rngs := make([]uint64, s.Publishers)
	for w := range rngs {
		rngs[w] = uint64(w)*0x9E3779B97F4A7C15 + 1
		bufs[w] = make([]byte, 0, s.RecordBytes)
	}
	op := func(w int) (int64, int64, error) {
		it, err := c.Get(keys[xorshift(&rngs[w])%uint64(len(keys))], bufs[w][:0])
		if err != nil {
			return 0, 0, err
		}
		return 1, int64(len(it.Value)), nil
	}
	rec := bench.NewRecorder(s.Publishers)
	stop := progress(s, "cache/get", rec)
	load := s.load(s.Publishers)
	load.Rate = s.Rate // gets are single records
	m, err := bench.Run(ctx, load, rec, op)
	stop()
	if err != nil {
		return bench.Result{}, err
	}
	return bench.NewResult("cache/get", bench.RoleWorkload, cacheParams(s), m), nil
}

// xorshift is a per-worker random number generator: no lock, no allocation.
func xorshift(x *uint64) uint64 {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return *x
}
