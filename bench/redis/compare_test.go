package redisbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio/wire"
)

// settings are the run's shape, from the environment compare.sh sets.
type settings struct {
	felixAddr, redisAddr string
	label                string // the durability pair, for the table
	clients              int
	keys                 int
	sizes                []int
	duration             time.Duration
	rounds               int
	shards               int
	out                  string // a file the table's rows are appended to
	felixPID, redisPID   string // the servers' processes, for their CPU time (optional)
}

func settingsFromEnv(t *testing.T) settings {
	s := settings{felixAddr: os.Getenv("FELIX_BENCH_FELIX_ADDR"), redisAddr: os.Getenv("FELIX_BENCH_REDIS_ADDR")}
	if s.felixAddr == "" || s.redisAddr == "" {
		t.Skip("bench/redis/compare.sh runs this beside a redis-server and a felix broker")
	}
	s.label = envOr("FELIX_BENCH_LABEL", "?")
	s.clients = envInt(t, "FELIX_BENCH_CLIENTS", 32)
	s.keys = envInt(t, "FELIX_BENCH_KEYS", 100_000)
	s.duration = time.Duration(envInt(t, "FELIX_BENCH_MILLIS", 3000)) * time.Millisecond
	s.rounds = envInt(t, "FELIX_BENCH_ROUNDS", 3)
	s.shards = envInt(t, "FELIX_BENCH_SHARDS", 4)
	s.out = os.Getenv("FELIX_BENCH_OUT")
	s.felixPID, s.redisPID = os.Getenv("FELIX_BENCH_FELIX_PID"), os.Getenv("FELIX_BENCH_REDIS_PID")
	for _, f := range strings.Split(envOr("FELIX_BENCH_SIZES", "0,256,4096"), ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("FELIX_BENCH_SIZES: %v", err)
		}
		s.sizes = append(s.sizes, n)
	}
	return s
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

var benchCache = wire.CacheRef{Tenant: []byte("bench"), Namespace: []byte("redis"), Cache: []byte("kv")}

// keyOf is the i-th key of the key space, the same bytes for both servers.
func keyOf(i int) []byte { return fmt.Appendf(nil, "key:%010d", i) }

// system is one server under test: how to open a client connection, and
// its process (for its CPU time; may be empty).
type system struct {
	name string
	dial func() (kvConn, error)
	pid  string
}

// round is one measured round: the generator's measurement, and the CPU
// time the server spent in it (0 when unknown).
type round struct {
	bench.Measurement
	cpu time.Duration
}

// cpuPerOp is the server's CPU time per operation, or 0 when unknown.
func (r round) cpuPerOp() time.Duration {
	if r.Records == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.Records)
}

// row is one line of the table: an operation and value size, each
// system's median round.
type row struct {
	op    string
	size  int
	felix round
	redis round
}

// TestFelixBesideRedis measures get and put with the same generator on
// both servers, alternating them round by round so that whatever else the
// machine does falls on both alike, and reports each one's median round.
func TestFelixBesideRedis(t *testing.T) {
	s := settingsFromEnv(t)
	createCache(t, s)
	felix := system{"felix", func() (kvConn, error) { return dialFelix(s.felixAddr, benchCache) }, s.felixPID}
	redis := system{"redis", func() (kvConn, error) { return dialRedis(s.redisAddr) }, s.redisPID}
	var rows []row
	for _, size := range s.sizes {
		value := make([]byte, size)
		for _, sys := range []system{felix, redis} {
			if err := preload(sys, s, value); err != nil {
				t.Fatalf("preloading %s: %v", sys.name, err)
			}
		}
		for _, op := range []string{"put", "get"} {
			r := row{op: op, size: size}
			var fs, rs []round
			for range s.rounds {
				fs = append(fs, measure(t, felix, s, op, value))
				rs = append(rs, measure(t, redis, s, op, value))
			}
			r.felix, r.redis = median(fs), median(rs)
			rows = append(rows, r)
			t.Log(formatRow(s.label, r))
		}
	}
	writeRows(t, s, rows)
}

// createCache makes the benchmark's cache on the broker (durable, with the
// broker's FsyncMode), unless it is there from an earlier run.
func createCache(t *testing.T, s settings) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, s.felixAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Cache(client.CacheName{Tenant: string(benchCache.Tenant), Namespace: string(benchCache.Namespace), Name: string(benchCache.Cache)}).
		Create(ctx, client.CacheConfig{Shards: s.shards})
	if err != nil && !errors.Is(err, client.ErrAlreadyExists) {
		t.Fatal(err)
	}
}

// preload writes every key of the key space with value, pipelined, over
// the benchmark's number of connections.
func preload(sys system, s settings, value []byte) error {
	const burst = 64
	var wg sync.WaitGroup
	errs := make(chan error, s.clients)
	for w := range s.clients {
		wg.Go(func() {
			c, err := sys.dial()
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			keys := make([][]byte, 0, burst)
			for i := w; i < s.keys; i += s.clients {
				if keys = append(keys, keyOf(i)); len(keys) == burst {
					if err := c.setMany(keys, value); err != nil {
						errs <- err
						return
					}
					keys = keys[:0]
				}
			}
			if len(keys) > 0 {
				errs <- c.setMany(keys, value)
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

// measure runs one round: s.clients connections, each with one request in
// flight, for s.duration.
func measure(t *testing.T, sys system, s settings, op string, value []byte) round {
	conns := make([]kvConn, s.clients)
	keys := make([][][]byte, s.clients) // each worker's own key order, made before the clock starts
	for i := range conns {
		c, err := sys.dial()
		if err != nil {
			t.Fatalf("%s: %v", sys.name, err)
		}
		defer c.Close()
		conns[i] = c
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		keys[i] = make([][]byte, 4096)
		for j := range keys[i] {
			keys[i][j] = keyOf(rng.IntN(s.keys))
		}
	}
	next := make([]int, s.clients)
	do := func(w int) (int64, int64, error) {
		k := keys[w][next[w]%len(keys[w])]
		next[w]++
		if op == "put" {
			return 1, int64(len(value)), conns[w].set(k, value)
		}
		found, err := conns[w].get(k)
		if err == nil && !found {
			err = errNotFound
		}
		return 1, int64(len(value)), err
	}
	cpu0, cpuOK := cpuTime(sys.pid)
	m, err := bench.Run(context.Background(), bench.Load{Workers: s.clients, Duration: s.duration}, nil, do)
	if err != nil {
		t.Fatalf("%s %s: %v", sys.name, op, err)
	}
	r := round{Measurement: m}
	if cpu1, ok := cpuTime(sys.pid); ok && cpuOK {
		r.cpu = cpu1 - cpu0
	}
	return r
}

func opsPerSec(m round) float64 { return float64(m.Records) / m.Elapsed.Seconds() }

// median is the round with the median throughput.
func median(ms []round) round {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b round) int {
		switch x, y := opsPerSec(a), opsPerSec(b); {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

const tableHeader = "| durability | op | value | felix ops/s | redis ops/s | felix/redis | felix p50 | redis p50 | felix p99 | redis p99 | felix CPU/op | redis CPU/op |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|\n"

func formatRow(label string, r row) string {
	return fmt.Sprintf("| %s | %s | %s | %.0f | %.0f | %.2fx | %s | %s | %s | %s | %s | %s |", label, r.op, sizeName(r.size),
		opsPerSec(r.felix), opsPerSec(r.redis), opsPerSec(r.felix)/opsPerSec(r.redis),
		us(r.felix.Latency.P50), us(r.redis.Latency.P50), us(r.felix.Latency.P99), us(r.redis.Latency.P99),
		cpuUS(r.felix.cpuPerOp()), cpuUS(r.redis.cpuPerOp()))
}

// cpuUS is a CPU time per operation in microseconds, or "-" when unknown.
func cpuUS(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f us", float64(d)/float64(time.Microsecond))
}

func sizeName(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f us", float64(d)/float64(time.Microsecond)) }

// writeRows appends the rows to s.out (with the header when the file is
// new), for compare.sh to print and keep.
func writeRows(t *testing.T, s settings, rows []row) {
	if s.out == "" {
		return
	}
	_, statErr := os.Stat(s.out)
	f, err := os.OpenFile(s.out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if errors.Is(statErr, os.ErrNotExist) {
		fmt.Fprint(f, tableHeader)
	}
	for _, r := range rows {
		fmt.Fprintln(f, formatRow(s.label, r))
	}
}
