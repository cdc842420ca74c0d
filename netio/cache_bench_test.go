package netio

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// The cache benchmarks: 32 connections over loopback, each with one get
// or put in flight, against a cache whose log is on the local disk
// (Periodic fsync), beside a bare Go echo server doing the same round
// trips with the same connections measured just before (x-echo: the
// cache's ops/s over the echo's). Felix beside Redis is bench/redis.
//
//	go test -run '^$' -bench BenchmarkCacheLoopback -benchtime 100000x ./netio/
const (
	cacheBenchClients = 32
	cacheBenchKeys    = 10_000
)

func BenchmarkCacheLoopback(b *testing.B) {
	for _, op := range []string{"get", "put"} {
		for _, size := range []int{0, 256, 4096} {
			b.Run(fmt.Sprintf("%s/%dB", op, size), func(b *testing.B) { benchCache(b, op, size) })
		}
	}
}

func benchCache(b *testing.B, op string, size int) {
	addr, ref := cacheBenchBroker(b)
	value := make([]byte, size)
	conns := make([]*cacheBenchConn, cacheBenchClients)
	for i := range conns {
		conns[i] = dialCacheBench(b, addr, ref)
	}
	for i := 0; i < cacheBenchKeys; i++ { // every key has a value: gets hit
		conns[i%len(conns)].put(b, benchKey(i), value)
	}
	echo := echoRoundTrips(b, len(conns), b.N, size+40)
	b.ReportAllocs()
	b.ResetTimer()
	rate, hist := closedLoop(b.N, len(conns), func(w int, rng *rand.Rand) {
		if op == "get" {
			conns[w].get(b, benchKey(rng.IntN(cacheBenchKeys)))
		} else {
			conns[w].put(b, benchKey(rng.IntN(cacheBenchKeys)), value)
		}
	})
	b.StopTimer()
	b.ReportMetric(rate, "ops/s")
	b.ReportMetric(float64(hist.ValueAtQuantile(50))/1e3, "p50-us")
	b.ReportMetric(float64(hist.ValueAtQuantile(99))/1e3, "p99-us")
	b.ReportMetric(rate/echo, "x-echo")
}

// cacheBenchBroker is a broker whose cache store keeps its logs on the
// local disk, with a 4-shard cache.
func cacheBenchBroker(b *testing.B) (string, wire.CacheRef) {
	d, err := ring.Open(ring.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	e, err := engine.Open(engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	store, err := cache.Open(cache.Options{FS: vfs.NewOS(d), Dir: b.TempDir(), Fsync: shardlog.Periodic(time.Second), CompactEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	id := cache.ID{Tenant: "acme", Namespace: "prod", Name: "bench"}
	if _, err := store.Create(id, cache.Config{Shards: 4, Durable: true}); err != nil {
		b.Fatal(err)
	}
	s, err := NewServer(Config{Addr: "127.0.0.1:0", Engine: e, Caches: store, Multicore: true})
	if err == nil {
		err = s.Start()
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Stop(b.Context()) })
	return s.Addr().String(), wire.CacheRef{Tenant: []byte(id.Tenant), Namespace: []byte(id.Namespace), Cache: []byte(id.Name)}
}

func benchKey(i int) []byte { return fmt.Appendf(nil, "key:%010d", i) }

// closedLoop runs n operations from clients goroutines, each one at a
// time, and returns the rate and the latency histogram.
func closedLoop(n, clients int, op func(worker int, rng *rand.Rand)) (float64, *hdrhistogram.Histogram) {
	hists := make([]*hdrhistogram.Histogram, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clients {
		hists[w] = hdrhistogram.New(1, int64(10*time.Second), 3)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for i := w; i < n; i += clients {
				t0 := time.Now()
				op(w, rng)
				hists[w].RecordValue(int64(time.Since(t0)))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := hdrhistogram.New(1, int64(10*time.Second), 3)
	for _, h := range hists {
		all.Merge(h)
	}
	return float64(n) / elapsed.Seconds(), all
}

// echoRoundTrips is the baseline: clients connections to a bare Go echo
// server, each sending size bytes and reading them back, n in all; it
// returns round trips per second.
func echoRoundTrips(b *testing.B, clients, n, size int) float64 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	conns := make([]net.Conn, clients)
	for i := range conns {
		if conns[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close()
	}
	bufs := make([][]byte, clients)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	rate, _ := closedLoop(n, clients, func(w int, _ *rand.Rand) {
		if _, err := conns[w].Write(bufs[w]); err != nil {
			b.Error(err)
		}
		if _, err := io.ReadFull(conns[w], bufs[w]); err != nil {
			b.Error(err)
		}
	})
	return rate
}

// cacheBenchConn is one benchmark client: one request at a time.
type cacheBenchConn struct {
	nc  net.Conn
	ref wire.CacheRef
	r   wire.Reader
	in  []byte
	out []byte
	id  uint64
}

func dialCacheBench(b *testing.B, addr string, ref wire.CacheRef) *cacheBenchConn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	c := &cacheBenchConn{nc: nc, ref: ref, in: make([]byte, 0, 64<<10)}
	c.out = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeatureCache})
	if f := c.roundTrip(b); f.Type != wire.TypeHelloOK {
		b.Fatalf("HELLO answered %v", f.Type)
	}
	return c
}

func (c *cacheBenchConn) roundTrip(b *testing.B) wire.Frame {
	if _, err := c.nc.Write(c.out); err != nil {
		b.Fatal(err)
	}
	c.in = c.in[:0]
	for {
		f, need, err := c.r.Next(c.in)
		if err != nil {
			b.Fatal(err)
		}
		if need == 0 {
			return f
		}
		if cap(c.in)-len(c.in) < need {
			c.in = append(make([]byte, 0, len(c.in)+need), c.in...)
		}
		n, err := c.nc.Read(c.in[len(c.in):cap(c.in)])
		if err != nil {
			b.Fatal(err)
		}
		c.in = c.in[:len(c.in)+n]
	}
}

func (c *cacheBenchConn) get(b *testing.B, key []byte) {
	c.id++
	c.out = wire.AppendCacheGet(c.out[:0], c.id, wire.CacheGet{Cache: c.ref, Key: key})
	if f := c.roundTrip(b); f.Type != wire.TypeCacheValue || f.Body[0] != 1 {
		b.Fatalf("get answered %v", f.Type)
	}
}

func (c *cacheBenchConn) put(b *testing.B, key, value []byte) {
	c.id++
	c.out = wire.AppendCachePut(c.out[:0], c.id, wire.CachePut{Cache: c.ref, Key: key, Value: value})
	if f := c.roundTrip(b); f.Type != wire.TypeCacheWritten {
		b.Fatalf("put answered %v", f.Type)
	}
}
