package cache

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// Benchmarks at the engine level (no sockets), on the real file system
// under b.TempDir (io_uring where the kernel allows it, the portable path
// otherwise), one shard, 32 concurrent callers:
//
//	BenchmarkPut          put of 0 B, 256 B, 4 KiB values over 10k keys (so
//	                      overwrites, the steady state), fsync on_commit and
//	                      periodic; ratio x-append: ops/s over raw
//	                      shardlog.AppendWait of the same records, same mode
//	BenchmarkGet          get of the same sizes over 10k keys, each read once
//	                      before, with the value cache on (gets answered from
//	                      memory) and off (each get reads the log); ratio
//	                      x-read: ops/s over raw shardlog.Read of one record at
//	                      an offset (the log read a get makes, without the index)
//	BenchmarkIndexMemory  index bytes per key at 1M keys; ratio x-map: over a
//	                      map[string]int64 holding the same keys
//	BenchmarkRebuild      records/s replayed into the index at open, 1M
//	                      records (unique keys, or 250k keys written 4 times);
//	                      ratio x-scan: over opening the log and reading it
//	                      through without an index
//
// Latency (p50-us, p99-us) is per operation, from the call to its answer.
const (
	benchCallers = 32
	benchKeys    = 10_000
)

var benchSizes = []int{0, 256, 4096}

var benchModes = []struct {
	name string
	mode shardlog.FsyncMode
}{{"on_commit", shardlog.OnCommit()}, {"periodic", shardlog.Periodic(100 * time.Millisecond)}}

// benchFS is the real file system for one benchmark; the driver closes
// after everything the benchmark opened on it (cleanups run last first).
func benchFS(b *testing.B) vfs.FS {
	d, err := ring.Open(ring.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return vfs.NewOS(d)
}

func benchKeyList() [][]byte {
	keys := make([][]byte, benchKeys)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%011d", i) // 15 bytes
	}
	return keys
}

func benchStore(b *testing.B, fs vfs.FS, mode shardlog.FsyncMode) *Cache {
	return benchStoreWith(b, Options{FS: fs, Dir: b.TempDir(), Fsync: mode, CompactEvery: -1})
}

func benchStoreWith(b *testing.B, o Options) *Cache {
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.Create(cid, Config{Durable: true}); err != nil {
		b.Fatal(err)
	}
	c, _ := s.Cache(cid)
	return c
}

// measured is what one run of callers saw.
type measured struct {
	ops     int
	elapsed time.Duration
	hist    *hdrhistogram.Histogram
}

func (m measured) opsPerSec() float64 { return float64(m.ops) / m.elapsed.Seconds() }

// callers runs n operations split across benchCallers goroutines, timing
// each.
func callers(n int, op func(g, i int) error) (measured, error) {
	hists := make([]*hdrhistogram.Histogram, benchCallers)
	errs := make([]error, benchCallers)
	var wg sync.WaitGroup
	began := time.Now()
	for g := range benchCallers {
		hists[g] = hdrhistogram.New(1, int64(10*time.Second), 3)
		count := n / benchCallers
		if g < n%benchCallers {
			count++
		}
		wg.Go(func() {
			for i := range count {
				t0 := time.Now()
				if err := op(g, i); err != nil {
					errs[g] = err
					return
				}
				hists[g].RecordValue(int64(time.Since(t0)))
			}
		})
	}
	wg.Wait()
	m := measured{ops: n, elapsed: time.Since(began), hist: hists[0]}
	for _, h := range hists[1:] {
		m.hist.Merge(h)
	}
	for _, err := range errs {
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

func report(b *testing.B, m measured, ratioName string, base measured) {
	b.ReportMetric(m.opsPerSec(), "ops/s")
	b.ReportMetric(float64(m.hist.ValueAtQuantile(50))/1e3, "p50-us")
	b.ReportMetric(float64(m.hist.ValueAtQuantile(99))/1e3, "p99-us")
	b.ReportMetric(m.opsPerSec()/base.opsPerSec(), ratioName)
}

func BenchmarkPut(b *testing.B) {
	keys := benchKeyList()
	for _, m := range benchModes {
		for _, size := range benchSizes {
			b.Run("fsync="+m.name+"/value="+strconv.Itoa(size), func(b *testing.B) {
				fs := benchFS(b)
				c := benchStore(b, fs, m.mode)
				value := make([]byte, size)
				if _, err := callers(benchKeys, func(g, i int) error {
					_, err := c.Put(keys[(i*benchCallers+g)%benchKeys], value, PutOptions{})
					return err
				}); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				got, err := callers(b.N, func(g, i int) error {
					_, err := c.Put(keys[(i*7919+g*104729)%benchKeys], value, PutOptions{})
					return err
				})
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				report(b, got, "x-append", appendBaseline(b, fs, m.mode, keys, value, b.N))
			})
		}
	}
}

// appendBaseline appends the same records straight to a shard log.
func appendBaseline(b *testing.B, fs vfs.FS, mode shardlog.FsyncMode, keys [][]byte, value []byte, n int) measured {
	l, err := shardlog.Open(shardlog.Options{FS: fs, Dir: filepath.Join(b.TempDir(), "raw"), Fsync: mode,
		BufferBytes: DefaultBufferBytes, IndexIntervalBytes: DefaultIndexIntervalBytes})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	m, err := callers(n, func(g, i int) error {
		_, err := l.AppendWait([]shardlog.Entry{{Key: keys[(i*7919+g*104729)%benchKeys], Value: value}}, 1)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkGet(b *testing.B) {
	for _, size := range benchSizes {
		for _, vc := range []struct {
			name  string
			bytes int64
		}{{"on", 0}, {"off", -1}} {
			b.Run(fmt.Sprintf("value=%d/value-cache=%s", size, vc.name), func(b *testing.B) {
				fs := benchFS(b)
				benchGet(b, benchStoreWith(b, Options{FS: fs, Dir: b.TempDir(), Fsync: shardlog.Periodic(100 * time.Millisecond),
					CompactEvery: -1, ValueCacheBytes: vc.bytes}), size)
			})
		}
	}
}

// benchGet fills benchKeys keys with size-byte values, gets every key once
// (so a value cache holds them) and then measures b.N gets.
func benchGet(b *testing.B, c *Cache, size int) {
	keys := benchKeyList()
	value := make([]byte, size)
	if _, err := callers(benchKeys, func(g, i int) error {
		_, err := c.Put(keys[i*benchCallers+g], value, PutOptions{})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	bufs := make([][]byte, benchCallers)
	for g := range bufs {
		bufs[g] = make([]byte, 0, size+1024)
	}
	for _, k := range keys {
		if _, err := c.Get(k, bufs[0][:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	got, err := callers(b.N, func(g, i int) error {
		it, err := c.Get(keys[(i*7919+g*104729)%benchKeys], bufs[g][:0])
		if err == nil && !it.Found {
			err = fmt.Errorf("key %d not found", (i*7919+g*104729)%benchKeys)
		}
		return err
	})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	report(b, got, "x-read", readBaseline(b, c.held(0).log(), b.N))
}

// readBaseline reads one record at a random offset of the same log, as a
// get does after its index lookup.
func readBaseline(b *testing.B, l *shardlog.Log, n int) measured {
	end := l.End()
	bufs := make([][]byte, benchCallers)
	m, err := callers(n, func(g, i int) error {
		off := int64((i*7919 + g*104729) % int(end))
		out, _, err := l.Read(off, 1, bufs[g][:0])
		bufs[g] = out
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// heapAfter returns the live heap after a full collection.
func heapAfter() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func BenchmarkIndexMemory(b *testing.B) {
	const n = 1_000_000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user/%08d/session", i) // 21 bytes
	}
	var perKey, mapPerKey float64
	for b.Loop() {
		before := heapAfter()
		ix := newIndex()
		for i, k := range keys {
			ix.set(ix.fingerprint(keyHash(k), k), k, slotMain, int64(i), false)
		}
		perKey = float64(heapAfter()-before) / n
		runtime.KeepAlive(ix)

		before = heapAfter()
		m := map[string]int64{}
		for i, k := range keys {
			m[string(k)] = int64(i)
		}
		mapPerKey = float64(heapAfter()-before) / n
		runtime.KeepAlive(m)
	}
	b.ReportMetric(perKey, "bytes/key")
	b.ReportMetric(mapPerKey, "map-bytes/key")
	b.ReportMetric(perKey/mapPerKey, "x-map")
}

func BenchmarkRebuild(b *testing.B) {
	const records = 1_000_000
	for _, shape := range []struct {
		name string
		keys int
	}{{"unique", records}, {"overwritten-4x", records / 4}} {
		b.Run("keys="+shape.name, func(b *testing.B) {
			fs := benchFS(b)
			dir := b.TempDir()
			o := Options{FS: fs, Dir: dir, Fsync: shardlog.None(), CompactEvery: -1}
			fillForRebuild(b, o, shape.keys, records)
			b.ResetTimer()
			began := time.Now()
			for range b.N {
				s, err := Open(o)
				if err != nil {
					b.Fatal(err)
				}
				if c, _ := s.Cache(cid); c.Stats()[0].Keys != shape.keys {
					b.Fatalf("rebuilt %d keys, want %d", c.Stats()[0].Keys, shape.keys)
				}
				s.Close()
			}
			rate := float64(records*b.N) / time.Since(began).Seconds()
			b.StopTimer()
			b.ReportMetric(rate, "records/s")
			b.ReportMetric(rate/scanBaseline(b, fs, valuesDir(dir, cid, 0)), "x-scan")
		})
	}
}

// fillForRebuild writes records puts over keys distinct keys, in a random
// order of keys, through 8 writers.
func fillForRebuild(b *testing.B, o Options, keys, records int) {
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Create(cid, Config{Durable: true}); err != nil {
		b.Fatal(err)
	}
	c, _ := s.Cache(cid)
	value := make([]byte, 32)
	perm := rand.New(rand.NewPCG(1, 1)).Perm(keys)
	var wg sync.WaitGroup
	const writers = 8
	for w := range writers {
		wg.Go(func() {
			for i := w; i < records; i += writers {
				k := fmt.Appendf(nil, "user/%08d/session", perm[i%keys])
				if _, err := c.Put(k, value, PutOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// scanBaseline opens the shard's log and reads every record through,
// without an index: the floor under a rebuild.
func scanBaseline(b *testing.B, fs vfs.FS, dir string) float64 {
	began := time.Now()
	l, err := shardlog.Open(shardlog.Options{FS: fs, Dir: dir, Fsync: shardlog.None(), IndexIntervalBytes: DefaultIndexIntervalBytes})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	n := 0
	buf := make([]byte, 0, rebuildReadBytes+readBufBytes)
	for from := l.Start(); from < l.End(); {
		out, next, err := l.Read(from, rebuildReadBytes, buf[:0])
		if err != nil {
			b.Fatal(err)
		}
		it := segment.NewIter(out)
		for _, ok := it.Next(); ok; _, ok = it.Next() {
			n++
		}
		buf, from = out, next
	}
	return float64(n) / time.Since(began).Seconds()
}
