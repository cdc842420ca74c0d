//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio/wire"
)

// The cache load every nemesis run carries beside its stream (issue 16):
// a cache of nemesisCacheShards shards at replication factor 3,
// consistency Quorum, durable with OnCommit fsync, created at the run's
// start, and nemesisCacheWorkers goroutines, each a ClusterClient of its
// own making one operation at a time (a put of a value no other put
// writes, a conditional put at the offset its last get of the key
// returned, a get, a delete, a counter add, a counter get) while the
// faults run. Every operation goes into the run's check.Recorder, so the
// history checker judges the keys for linearizability (cache-
// nonlinearizable, counter-nonlinearizable) and the counters against
// what their adds can sum to (counter-bounds) each time checkShard runs.
//
// Each round is an epoch with keys of its own (checkShard ends it), so
// that a key's history is one round's: what a porcupine search costs is
// bounded by a round's operations, not the run's.

const (
	nemesisCacheShards  = 3
	nemesisCacheWorkers = 3
	nemesisCacheKeys    = 3 // values keys of an epoch
	nemesisCounterKeys  = 2 // counters of an epoch
	// cacheOpTimeout bounds one operation, retries of a read included:
	// past the publish timeout, so a write without a quorum is answered
	// no_quorum rather than cut short.
	cacheOpTimeout = 3 * time.Second
	// cachePace is the least time between one worker's operations, and
	// cacheOpsEpochMax the most a worker makes in an epoch.
	cachePace        = 25 * time.Millisecond
	cacheOpsEpochMax = 200
)

// cacheOpKind is one kind of cache operation, for the counts.
type cacheOpKind int

const (
	cachePut cacheOpKind = iota
	cacheCAS
	cacheGet
	cacheDelete
	counterAdd
	counterGet
	cacheOpKinds
)

var cacheOpNames = [cacheOpKinds]string{"put", "cas", "get", "del", "add", "counter-get"}

// cacheCounts are operations by kind and outcome (check.Ok, Fail,
// Unknown: indexed by check.Outcome).
type cacheCounts [cacheOpKinds][check.Unknown + 1]int

func (n *cacheCounts) add(o cacheCounts) {
	for k := range n {
		for oc := range n[k] {
			n[k][oc] += o[k][oc]
		}
	}
}

// String is "put 40 (38 ok, 2 unknown), ...".
func (n cacheCounts) String() string {
	var out []string
	for k, by := range n {
		total := by[check.Ok] + by[check.Fail] + by[check.Unknown]
		s := fmt.Sprintf("%s %d", cacheOpNames[k], total)
		var parts []string
		for _, oc := range []check.Outcome{check.Ok, check.Fail, check.Unknown} {
			if by[oc] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", by[oc], oc))
			}
		}
		if total > 0 {
			s += " (" + strings.Join(parts, ", ") + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// logKey names one replicated log of the cache: a shard's values or its
// counters.
type logKey struct {
	shard    int
	counters bool
}

// cacheLoad is a run's cache and the workers using it.
type cacheLoad struct {
	t    *testing.T
	h    *history
	name client.CacheName

	stop     chan struct{}
	done     sync.WaitGroup
	stopOnce sync.Once

	mu     sync.Mutex
	epoch  int
	counts cacheCounts      // this epoch's
	total  cacheCounts      // every epoch's before this one
	acked  map[logKey]int64 // the highest offset a write to each log was acknowledged at
}

// startCacheLoad creates the run's cache through a cluster client, waits
// until every shard of it names a leader, and starts the workers; they
// stop when the test ends, or at end.
func (c *nemesisCluster) startCacheLoad(ctx context.Context, h *history, name string) *cacheLoad {
	c.t.Helper()
	l := &cacheLoad{t: c.t, h: h, name: client.CacheName{Tenant: "t", Namespace: "nemesis", Name: name},
		stop: make(chan struct{}), acked: map[logKey]int64{}}
	cfg := client.CacheConfig{Shards: nemesisCacheShards, ReplicationFactor: 3, Consistency: client.ConsistencyQuorum,
		Fsync: client.Fsync{Kind: client.FsyncOnCommit}}
	ca := c.clusterClient(ctx).Cache(l.name)
	if err := ca.Create(ctx, cfg); err != nil {
		c.t.Fatalf("create the cache %v (%+v): %v", l.name, cfg, err)
	}
	awaitCacheLeaders(c.t, ctx, ca)
	var clients []*client.ClusterClient
	for range nemesisCacheWorkers {
		clients = append(clients, c.clusterClient(ctx))
	}
	// Registered after the clients' Close: it runs first.
	c.t.Cleanup(l.end)
	for _, cc := range clients {
		process := h.process()
		l.done.Go(func() { l.work(ctx, process, cc.Cache(l.name)) })
	}
	return l
}

// awaitCacheLeaders polls the cache's description until every shard
// names a leader.
func awaitCacheLeaders(t *testing.T, ctx context.Context, ca *client.ClusterCache) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := ca.Describe(ctx)
		led := 0
		for _, sh := range info.Shards {
			if sh.LeaderAddr != "" {
				led++
			}
		}
		if err == nil && led == nemesisCacheShards {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the cache %v: %d of %d shards name a leader (%+v, %v)", ca.Name(), led, nemesisCacheShards, info, err)
		}
	}
}

// end stops the workers and waits for the operations in flight to be
// answered. Safe to call more than once.
func (l *cacheLoad) end() {
	l.stopOnce.Do(func() { close(l.stop) })
	l.done.Wait()
}

// endEpoch moves the workers to the next epoch's keys and returns the
// counts of the one that ended and of every epoch so far.
func (l *cacheLoad) endEpoch() (epoch, all cacheCounts) {
	l.mu.Lock()
	defer l.mu.Unlock()
	epoch = l.counts
	l.total.add(l.counts)
	l.counts = cacheCounts{}
	l.epoch++
	return epoch, l.total
}

// ackedOffsets is the highest offset acknowledged to a write of each
// log.
func (l *cacheLoad) ackedOffsets() map[logKey]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[logKey]int64, len(l.acked))
	for k, v := range l.acked {
		out[k] = v
	}
	return out
}

func (l *cacheLoad) currentEpoch() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// work makes one operation after the other, paced, at most
// cacheOpsEpochMax an epoch, until the load ends.
func (l *cacheLoad) work(ctx context.Context, process int, ca *client.ClusterCache) {
	rng := rand.New(rand.NewPCG(uint64(process), 16))
	pace := time.NewTicker(cachePace)
	defer pace.Stop()
	w := &cacheWorker{l: l, process: process, ca: ca, rng: rng, read: map[string]client.Item{}, epoch: -1}
	for {
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		case <-pace.C:
		}
		if e := l.currentEpoch(); e != w.epoch {
			w.epoch, w.made = e, 0
			clear(w.read)
		}
		if w.made < cacheOpsEpochMax {
			w.made++
			w.one(ctx)
		}
	}
}

// cacheWorker is one worker's state.
type cacheWorker struct {
	l       *cacheLoad
	process int
	ca      *client.ClusterCache
	rng     *rand.Rand
	read    map[string]client.Item // the last value each key's get returned, this epoch
	epoch   int
	made    int // operations this epoch
	values  int // values written, for unique ones
}

// one makes one operation, chosen at random, and records it.
func (w *cacheWorker) one(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, cacheOpTimeout)
	defer cancel()
	key := fmt.Sprintf("e%d k%d", w.epoch, w.rng.IntN(nemesisCacheKeys))
	counter := fmt.Sprintf("e%d n%d", w.epoch, w.rng.IntN(nemesisCounterKeys))
	switch r := w.rng.IntN(20); {
	case r < 5:
		w.get(ctx, key)
	case r < 9:
		w.put(ctx, key)
	case r < 11:
		w.del(ctx, key)
	case r < 14:
		if _, ok := w.read[key]; ok {
			w.cas(ctx, key)
		} else {
			w.get(ctx, key)
		}
	case r < 17:
		w.add(ctx, counter, int64(1+w.rng.IntN(5)))
	default:
		w.counterGet(ctx, counter)
	}
}

func (w *cacheWorker) value() string {
	w.values++
	return fmt.Sprintf("p%d v%d", w.process, w.values)
}

func (w *cacheWorker) invoke(in check.Input) check.Handle {
	return w.l.h.rec.Invoke(w.process, w.l.h.now(), in)
}

func (w *cacheWorker) get(ctx context.Context, key string) {
	op := w.invoke(check.KVInput{Op: check.KVGet, Key: key})
	it, err := w.ca.Get(ctx, []byte(key))
	if err == nil && it.Found {
		w.read[key] = it
	}
	w.l.complete(cacheGet, op, check.KVOutput{Found: it.Found, Value: string(it.Value)}, err)
}

func (w *cacheWorker) put(ctx context.Context, key string) {
	v := w.value()
	op := w.invoke(check.KVInput{Op: check.KVPut, Key: key, Value: v})
	wr, err := w.ca.Put(ctx, []byte(key), []byte(v))
	w.l.written(key, false, wr.Offset, err)
	w.l.complete(cachePut, op, check.KVOutput{Found: wr.Existed}, err)
}

func (w *cacheWorker) del(ctx context.Context, key string) {
	op := w.invoke(check.KVInput{Op: check.KVDelete, Key: key})
	wr, err := w.ca.Delete(ctx, []byte(key))
	w.l.written(key, false, wr.Offset, err)
	w.l.complete(cacheDelete, op, check.KVOutput{Found: wr.Existed}, err)
}

// cas puts a new value at the offset the key's last get returned: a
// compare-and-set on that get's value, since every put writes a value of
// its own. A precondition refusal is an answer: not applied.
func (w *cacheWorker) cas(ctx context.Context, key string) {
	last, v := w.read[key], w.value()
	op := w.invoke(check.KVInput{Op: check.KVCompareAndSet, Key: key, Value: v, Expected: string(last.Value)})
	wr, err := w.ca.PutIfOffset(ctx, []byte(key), []byte(v), last.Offset)
	var pe *client.PreconditionError
	if errors.As(err, &pe) {
		w.l.complete(cacheCAS, op, check.KVOutput{Found: false}, nil)
		return
	}
	w.l.written(key, false, wr.Offset, err)
	w.l.complete(cacheCAS, op, check.KVOutput{Found: true}, err)
}

func (w *cacheWorker) add(ctx context.Context, key string, delta int64) {
	op := w.invoke(check.CounterInput{Op: check.CounterAdd, Key: key, Delta: delta})
	v, err := w.ca.Counter(key).Add(ctx, delta)
	w.l.written(key, true, v.Offset, err)
	w.l.complete(counterAdd, op, check.CounterOutput{Value: v.Sum}, err)
}

func (w *cacheWorker) counterGet(ctx context.Context, key string) {
	op := w.invoke(check.CounterInput{Op: check.CounterGet, Key: key})
	v, err := w.ca.Counter(key).Get(ctx)
	w.l.complete(counterGet, op, check.CounterOutput{Value: v.Sum}, err)
}

// written notes an acknowledged write's offset in its shard's log.
func (l *cacheLoad) written(key string, counters bool, offset int64, err error) {
	if err != nil || offset < 0 {
		return
	}
	k := logKey{shard: client.ShardFor([]byte(key), nemesisCacheShards), counters: counters}
	l.mu.Lock()
	defer l.mu.Unlock()
	if o, ok := l.acked[k]; !ok || offset > o {
		l.acked[k] = offset
	}
}

// complete records an operation's answer (see cacheOutcome) and counts
// it.
func (l *cacheLoad) complete(kind cacheOpKind, op check.Handle, out check.Output, err error) {
	now := l.h.now()
	oc := cacheOutcome(err)
	switch oc {
	case check.Ok:
		op.Ok(now, out)
	case check.Fail:
		op.Fail(now, err.Error())
	default:
		op.Unknown(now, err.Error())
	}
	l.mu.Lock()
	l.counts[kind][oc]++
	l.mu.Unlock()
}

// cacheOutcome is how a cache operation that answered err is recorded:
// Ok when it was answered; Unknown when the client says it may have been
// applied (client.Ambiguous: no_quorum, timeout, storage_failed, a lost
// connection, a deadline, and any failure after a try of unknown outcome,
// whatever the last try's own error), and when nothing was sent; Fail
// otherwise: a broker's refusal whose code says nothing was applied
// (not_leader, shutting_down, overloaded, not_found), or the client's own
// before sending. "Not sent" is not trusted as Fail: with it counted Fail
// (after 6c2bd81, which made the cluster client report the worst of its
// tries), one partition round of ten reported a cache key no linearization
// fits, and 60 more rounds did not show it again (docs/reliability.md).
func cacheOutcome(err error) check.Outcome {
	switch {
	case err == nil:
		return check.Ok
	case client.Ambiguous(err), errors.Is(err, client.ErrNotSent):
		return check.Unknown
	}
	return check.Fail
}

// A cache operation is Fail only on a broker's refusal whose code says
// nothing was applied, or the client's own before sending; a lost
// connection, a deadline, no_quorum, a timeout, "not sent", and a refusal
// after a try of unknown outcome are of unknown outcome.
func TestTheNemesisCacheLoadRecordsOnlyDefiniteRefusalsAsFailed(t *testing.T) {
	refusal := func(c wire.Code) error {
		return fmt.Errorf("wrapped: %w", &client.ServerError{Code: client.Code(c), Name: c.String()})
	}
	for _, c := range []struct {
		err  error
		want check.Outcome
	}{
		{nil, check.Ok},
		{refusal(wire.CodeNotLeader), check.Fail},
		{refusal(wire.CodeShuttingDown), check.Fail},
		{&client.ServerError{Code: client.Code(wire.CodeLimitExceeded), Local: true}, check.Fail},
		{refusal(wire.CodeNoQuorum), check.Unknown},
		{refusal(wire.CodeTimeout), check.Unknown},
		{refusal(wire.CodeStorageFailed), check.Unknown},
		{client.ErrConnectionLost, check.Unknown},
		{client.ErrNotSent, check.Unknown},
		{fmt.Errorf("%w after %w", refusal(wire.CodeNotLeader), client.ErrUnknownOutcome), check.Unknown},
		{context.DeadlineExceeded, check.Unknown},
	} {
		if got := cacheOutcome(c.err); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
}
