package workload

import (
	"context"
	"fmt"
	"os"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// CacheInProcess is Cache without a broker or a network: a cache store in
// this process on a fresh directory under dir (removed afterwards),
// through a ring driver of s.IO, the same mix called by s.Publishers
// workers. Beside it, the same mix on a bare shard log: puts are appends
// of the same records (log/append), gets reads of one record at random
// offsets (log/read). What it tells, set beside Cache: how much of an
// operation's cost is the store's.
func CacheInProcess(ctx context.Context, dir string, s Spec, c CacheShape) ([]bench.Result, error) {
	s, c, err := cacheSpec(s, c)
	if err != nil {
		return nil, err
	}
	ca, driver, cleanup, err := openCache(dir, s)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	params := cacheParams(s, c)
	params.Connections, params.IOPath = 0, string(driver.Kind())
	ops := &engineCache{c: ca, bufs: make([][]byte, max(s.Publishers, preloadWorkers(s, c)))}
	rs, err := measureCache(ctx, s, c, ops, params)
	if err != nil {
		return nil, err
	}
	base, err := rawLogBaselines(ctx, dir, s, c, params)
	if err != nil {
		return nil, err
	}
	machine := bench.DescribeMachine(dir)
	for i := range rs {
		rs[i].Machine = &machine
		rs[i].AddBaseline(base[rs[i].Workload].Workload, base[rs[i].Workload])
	}
	return rs, nil
}

// engineCache calls the store; worker w reads into its own buffer.
type engineCache struct {
	c    *cache.Cache
	bufs [][]byte
}

func (o *engineCache) get(w int, key []byte) (int, bool, error) {
	it, err := o.c.Get(key, o.bufs[w][:0])
	if cap(it.Value) > cap(o.bufs[w]) {
		o.bufs[w] = it.Value[:0]
	}
	return len(it.Value), it.Found, err
}

func (o *engineCache) put(_ int, key, value []byte) error {
	_, err := o.c.Put(key, value, cache.PutOptions{})
	return err
}

// openCache opens a store through a ring driver of s.IO in a fresh
// directory under dir and creates one durable single-shard cache at
// s.Fsync; cleanup closes everything and removes the directory.
func openCache(dir string, s Spec) (*cache.Cache, ring.Driver, func(), error) {
	d, err := ring.Open(ring.Config{Mode: s.IO})
	if err != nil {
		return nil, nil, nil, err
	}
	storeDir, err := os.MkdirTemp(dir, "felix-bench-cache-")
	if err != nil {
		d.Close()
		return nil, nil, nil, fmt.Errorf("felix/bench/workload: %w", err)
	}
	id := cache.ID{Tenant: "bench", Namespace: "bench", Name: "cache"}
	st, err := cache.Open(cache.Options{FS: vfs.NewOS(d), Dir: storeDir, Fsync: s.Fsync, PrepareSegments: true})
	if err == nil {
		_, err = st.Create(id, cache.Config{Shards: 1, Durable: true, Fsync: engineFsync(s.Fsync)})
	}
	var c *cache.Cache
	if err == nil {
		c, err = st.Cache(id)
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
	return c, d, cleanup, nil
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
