package workload

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/felixbroker/felix/bench"
)

// CacheShape is what the cache workloads take beside a Spec.
type CacheShape struct {
	// Keys is how many distinct keys the operations spread over, each
	// drawn uniformly; 0 is CacheKeysDefault. Every key is written once
	// before the clock starts when the mix has gets, so every get finds a
	// value.
	Keys int
	// GetPercent is the share of operations that are gets, 0..100; the
	// rest are puts. Each client interleaves them evenly (at 90, nine of
	// every ten are gets), so a run bounded by a count does an exact
	// number of each.
	GetPercent int
}

// Limits and defaults of a CacheShape.
const (
	CacheKeysDefault = 10_000
	CacheKeysMax     = 10_000_000
	// cacheKeyBytes is a key's length: "key:" and ten digits.
	cacheKeyBytes = 14
	// cachePreloadWorkers write the keys before the clock starts.
	cachePreloadWorkers = 32
)

// WithDefaults fills the zero fields and checks the rest.
func (c CacheShape) WithDefaults() (CacheShape, error) {
	if c.Keys == 0 {
		c.Keys = CacheKeysDefault
	}
	switch {
	case c.Keys < 1 || c.Keys > CacheKeysMax:
		return c, fmt.Errorf("%w: %d keys, want 1..%d", ErrSpec, c.Keys, CacheKeysMax)
	case c.GetPercent < 0 || c.GetPercent > 100:
		return c, fmt.Errorf("%w: %d%% gets, want 0..100", ErrSpec, c.GetPercent)
	}
	return c, nil
}

// cacheSpec fills the defaults of both: one operation per call, one call
// at a time per client.
func cacheSpec(s Spec, c CacheShape) (Spec, CacheShape, error) {
	s.Batch, s.Inflight = 1, 1
	s, err := s.WithDefaults()
	if err != nil {
		return s, c, err
	}
	c, err = c.WithDefaults()
	return s, c, err
}

// cacheOps is what the mix drives: a cache on a broker through the
// client, or one in this process. Worker w calls with its own w only, so
// a backend may keep scratch per worker; different workers call at once.
type cacheOps interface {
	get(w int, key []byte) (valueBytes int, found bool, err error)
	put(w int, key, value []byte) error
}

// The two kinds of operation, as the results name them.
const (
	cacheGet = "cache/get"
	cachePut = "cache/put"
)

// measureCache writes every key once (when the mix has gets), then runs
// the mix of s and c through ops. It returns a RoleWorkload result for
// each kind the mix has, gets first, with params (and the gets' misses)
// and without baselines.
func measureCache(ctx context.Context, s Spec, c CacheShape, ops cacheOps, params bench.Params) ([]bench.Result, error) {
	run, err := runMix(ctx, s, "cache", c, ops, c.GetPercent > 0)
	if err != nil {
		return nil, err
	}
	return run.results(bench.RoleWorkload, cacheGet, cachePut, params), nil
}

// mixBaselines runs the same mix through the raw path ops (writing every
// key first when preloadFirst and the mix has gets), bounded by the
// baseline duration, and names its kinds' results getName and putName,
// keyed by kind.
func mixBaselines(ctx context.Context, s Spec, c CacheShape, ops cacheOps, preloadFirst bool, getName, putName string,
	params bench.Params) (map[string]bench.Result, error) {
	s.Duration = baselineDuration(s)
	run, err := runMix(ctx, s, "baseline", c, ops, preloadFirst && c.GetPercent > 0)
	if err != nil {
		return nil, err
	}
	return run.byKind(bench.RoleBaseline, getName, putName, params), nil
}

// mixRun is one run of a mix: its clock and what each kind did.
type mixRun struct {
	c  CacheShape
	pm bench.Measurement
	m  *cacheMix
}

// runMix writes every key first when preloadFirst, then runs the mix.
func runMix(ctx context.Context, s Spec, label string, c CacheShape, ops cacheOps, preloadFirst bool) (mixRun, error) {
	value := pattern(s.RecordBytes)
	if preloadFirst {
		if err := preload(ctx, s, label+"/preload", c, ops, value); err != nil {
			return mixRun{}, err
		}
	}
	m := newCacheMix(s, c, ops, value)
	stop := progress(s, label, m)
	pm, err := bench.RunPipeline(ctx, s.load(s.Publishers), 1, nil, m)
	stop()
	return mixRun{c: c, pm: pm, m: m}, err
}

// results are the kinds the mix has, gets first, of role and named
// getName and putName; the gets' carry their misses.
func (r mixRun) results(role bench.Role, getName, putName string, params bench.Params) []bench.Result {
	byKind := r.byKind(role, getName, putName, params)
	var out []bench.Result
	for _, kind := range []string{cacheGet, cachePut} {
		if res, ok := byKind[kind]; ok {
			out = append(out, res)
		}
	}
	return out
}

// byKind is results keyed by kind (cacheGet, cachePut).
func (r mixRun) byKind(role bench.Role, getName, putName string, params bench.Params) map[string]bench.Result {
	out := map[string]bench.Result{}
	if r.c.GetPercent > 0 {
		p := withExtra(params, "misses", strconv.FormatInt(r.m.misses(), 10))
		out[cacheGet] = bench.NewResult(getName, role, p, measurementOf(r.pm, r.m.gets))
	}
	if r.c.GetPercent < 100 {
		out[cachePut] = bench.NewResult(putName, role, params, measurementOf(r.pm, r.m.puts))
	}
	return out
}

func cacheParams(s Spec, c CacheShape) bench.Params {
	return bench.Params{RecordBytes: s.RecordBytes, Connections: s.Connections, Fsync: FsyncName(s.Fsync), Rate: s.Rate,
		Extra: map[string]string{"clients": strconv.Itoa(s.Publishers), "keys": strconv.Itoa(c.Keys),
			"gets": strconv.Itoa(c.GetPercent) + "%"}}
}

// measurementOf is one kind's share of the mixed run pm.
func measurementOf(pm bench.Measurement, rec *bench.Recorder) bench.Measurement {
	records, bytes := rec.Totals()
	return bench.Measurement{Started: pm.Started, Elapsed: pm.Elapsed, Records: records, Bytes: bytes, Latency: rec.Latency()}
}

// preload puts every key once, cachePreloadWorkers (at least one per
// client) at a time, uncounted: worker w writes keys w, w+workers, ...
func preload(ctx context.Context, s Spec, label string, c CacheShape, ops cacheOps, value []byte) error {
	workers := preloadWorkers(s, c)
	keys, next := make([][]byte, workers), make([]int, workers)
	for w := range keys {
		keys[w], next[w] = make([]byte, 0, cacheKeyBytes), w
	}
	rec := bench.NewRecorder(workers)
	stop := progress(s, label, rec)
	defer stop()
	_, err := bench.Run(ctx, bench.Load{Workers: workers, Ops: int64(c.Keys)}, rec, func(w int) (int64, int64, error) {
		keys[w] = appendKey(keys[w][:0], next[w])
		next[w] += workers
		return 1, int64(len(value)), ops.put(w, keys[w], value)
	})
	return err
}

func preloadWorkers(s Spec, c CacheShape) int {
	return min(c.Keys, max(cachePreloadWorkers, s.Publishers))
}

// appendKey appends key k: "key:" and k in ten decimal digits.
func appendKey(dst []byte, k int) []byte {
	var digits [cacheKeyBytes - 4]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + k%10)
		k /= 10
	}
	return append(append(dst, "key:"...), digits[:]...)
}

// cacheMix runs a mix through RunPipeline, which paces the calls (closed
// or open loop) with a window of one: a worker's Send and Await run one
// after the other on the worker's goroutine. Send makes the whole
// synchronous call, measured from its due time, and records it in the
// worker's lane of its kind; Await has nothing left to wait for.
type cacheMix struct {
	ops        cacheOps
	keys       uint64
	getPercent int
	value      []byte
	gets, puts *bench.Recorder
	workers    []mixWorker
}

// mixWorker is one worker's state, on a cache line of its own.
type mixWorker struct {
	key    []byte
	rng    uint64
	share  int // the mix's accumulator: the call is a get when it reaches 100
	missed int64
	_      [16]byte
}

func newCacheMix(s Spec, c CacheShape, ops cacheOps, value []byte) *cacheMix {
	m := &cacheMix{ops: ops, keys: uint64(c.Keys), getPercent: c.GetPercent, value: value,
		gets: bench.NewRecorder(s.Publishers), puts: bench.NewRecorder(s.Publishers), workers: make([]mixWorker, s.Publishers)}
	for w := range m.workers {
		m.workers[w].key = make([]byte, 0, cacheKeyBytes)
		m.workers[w].rng = uint64(w)*0x9E3779B97F4A7C15 + 1
	}
	return m
}

func (m *cacheMix) Send(w int, due time.Time) (any, error) {
	x := &m.workers[w]
	x.key = appendKey(x.key[:0], int(xorshift(&x.rng)%m.keys))
	if x.share += m.getPercent; x.share >= 100 {
		x.share -= 100
		n, found, err := m.ops.get(w, x.key)
		if err != nil {
			return nil, err
		}
		if !found {
			x.missed++
		}
		record(m.gets.Lane(w), due, int64(n))
		return nil, nil
	}
	if err := m.ops.put(w, x.key, m.value); err != nil {
		return nil, err
	}
	record(m.puts.Lane(w), due, int64(len(m.value)))
	return nil, nil
}

func record(lane *bench.Lane, due time.Time, bytes int64) {
	lane.Record(time.Since(due))
	lane.Count(1, bytes)
}

func (m *cacheMix) Await(int, any) (int64, int64, error) { return 0, 0, nil }

// Totals is both kinds' so far, for the progress line.
func (m *cacheMix) Totals() (records, bytes int64) {
	gr, gb := m.gets.Totals()
	pr, pb := m.puts.Totals()
	return gr + pr, gb + pb
}

// misses counts the gets that found no value; read after the run.
func (m *cacheMix) misses() int64 {
	var n int64
	for w := range m.workers {
		n += m.workers[w].missed
	}
	return n
}

// xorshift is a per-worker random number generator: no lock, no allocation.
func xorshift(x *uint64) uint64 {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return *x
}
