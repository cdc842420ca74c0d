package redisbench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/broker"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio"
)

// TestMemoryPerKey loads the same keys (0-byte values, so what is left is
// what each server spends per key) into Redis, measured by its own
// used_memory, and into a Felix broker started in this process, measured
// as the live heap after a collection: the index and whatever else the
// broker keeps per key. The external felix broker's resident memory grows
// by is reported too, with Redis's, when compare.sh names its process.
func TestMemoryPerKey(t *testing.T) {
	s := settingsFromEnv(t)
	n := envInt(t, "FELIX_BENCH_MEMKEYS", 1_000_000)
	value := []byte{}
	lines := []string{fmt.Sprintf("| keys | %d, 14-byte keys, 0-byte values |", n)}

	r, err := dialRedis(s.redisAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, rssBefore := redisMemory(t, r)
	sys := system{name: "redis", dial: func() (kvConn, error) { return dialRedis(s.redisAddr) }}
	if err := preloadN(sys, s.clients, n, "mem", value); err != nil {
		t.Fatal(err)
	}
	after, rssAfter := redisMemory(t, r)
	lines = append(lines, fmt.Sprintf("| redis used_memory | %.1f bytes/key |", float64(after-before)/float64(n)),
		fmt.Sprintf("| redis resident (RSS) | %.1f bytes/key |", float64(rssAfter-rssBefore)/float64(n)))

	heap := felixHeapPerKey(t, s.clients, n, value)
	lines = append(lines, fmt.Sprintf("| felix live heap (index and all) | %.1f bytes/key |", heap))
	if pid := os.Getenv("FELIX_BENCH_FELIX_PID"); pid != "" {
		rss0 := rssOf(t, pid)
		sys := system{name: "felix", dial: func() (kvConn, error) { return dialFelix(s.felixAddr, benchCache) }}
		createCache(t, s)
		if err := preloadN(sys, s.clients, n, "mem", value); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("| felix resident (RSS, Go heap headroom included) | %.1f bytes/key |",
			float64(rssOf(t, pid)-rss0)/float64(n)))
	}
	for _, l := range lines {
		t.Log(l)
	}
	if s.out != "" {
		f, err := os.OpenFile(s.out+".memory", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintln(f, "| measure | value |\n|---|---|")
		for _, l := range lines {
			fmt.Fprintln(f, l)
		}
	}
}

// preloadN writes n keys named prefix:NNNNNNNNNN, pipelined.
func preloadN(sys system, clients, n int, prefix string, value []byte) error {
	const burst = 128
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for w := range clients {
		wg.Go(func() {
			c, err := sys.dial()
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			keys := make([][]byte, 0, burst)
			for i := w; i < n; i += clients {
				if keys = append(keys, fmt.Appendf(nil, "%s:%010d", prefix, i)); len(keys) == burst || i+clients >= n {
					if err := c.setMany(keys, value); err != nil {
						errs <- err
						return
					}
					keys = keys[:0]
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func redisMemory(t *testing.T, r *respConn) (used, rss int64) {
	t.Helper()
	u, err := r.info("memory", "used_memory")
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.info("memory", "used_memory_rss")
	if err != nil {
		t.Fatal(err)
	}
	used, _ = strconv.ParseInt(u, 10, 64)
	rss, _ = strconv.ParseInt(s, 10, 64)
	return used, rss
}

// rssOf reads a process's resident memory, in bytes, from /proc.
func rssOf(t *testing.T, pid string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// felixHeapPerKey starts a broker in this process (broker.Broker on a
// temporary directory, its durable cache made there), loads n keys through
// the wire, and returns the live heap it grew by per key.
func felixHeapPerKey(t *testing.T, clients, n int, value []byte) float64 {
	b, err := broker.Start(broker.Config{DataDir: t.TempDir(), Cache: cache.Options{CompactEvery: -1},
		Net: netio.Config{Addr: "127.0.0.1:0", Multicore: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Stop(ctx)
	}()
	if _, err := b.Caches().Create(cache.ID{Tenant: "bench", Namespace: "redis", Name: "kv"}, cache.Config{Shards: 4, Durable: true}); err != nil {
		t.Fatal(err)
	}
	addr := b.Addr().String()
	heap0 := liveHeap()
	sys := system{name: "felix", dial: func() (kvConn, error) { return dialFelix(addr, benchCache) }}
	if err := preloadN(sys, clients, n, "mem", value); err != nil {
		t.Fatal(err)
	}
	return float64(liveHeap()-heap0) / float64(n)
}

func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
