package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing/synctest"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

const (
	cacheClients = 2
	// cacheOpsMax bounds the cache operations of one run, beside opsMax.
	cacheOpsMax = 200
	// cacheKeys and counterKeys are how many keys of each kind the clients
	// share in a cache: few, so that their operations overlap.
	cacheKeys   = 3
	counterKeys = 2
)

// cacheWorkload is the simulated cache clients: each makes one operation
// at a time on a cache drawn at random, at the broker the store names the
// shard's leader (or, a stale route, at one drawn at random). An
// operation runs on a goroutine of its own, as a connection's would: a
// get or a write may wait for a commit (the simulator's syncs, a quorum),
// and the simulator's goroutine must never wait on a broker. Its outcome
// comes back through the inbox. Draws come from a source of its own, so
// a seed's stream workload and faults are drawn as without caches.
type cacheWorkload struct {
	w    *World
	rng  *rand.Rand
	busy [cacheClients]bool
	ops  int
	// lastRead is the latest value each key's get found, by cache and
	// key: a conditional put names its offset.
	lastRead map[string]cache.Item
	value    int
	final    bool // the final reads were made
}

func newCacheWorkload(w *World) *cacheWorkload {
	return &cacheWorkload{w: w, rng: rand.New(rand.NewPCG(w.cfg.Seed, 0x636c69)), lastRead: map[string]cache.Item{}}
}

// step starts the operations of the clients that draw one now.
func (l *cacheWorkload) step() {
	if len(l.w.cfg.Caches) == 0 {
		return
	}
	for c := range cacheClients {
		if l.busy[c] || l.ops >= cacheOpsMax || l.rng.Float64() >= float64(stepDuration)/float64(opEvery) {
			continue
		}
		l.ops++
		k := l.rng.IntN(len(l.w.cfg.Caches))
		b := l.w.broker(l.w.cp.table[cacheShardID(k)].Assignment.Leader.Broker)
		if b == nil || l.rng.Float64() < staleShare {
			b = l.w.brokers[l.rng.IntN(len(l.w.brokers))]
		}
		l.start(c, k, b, l.draw(k))
	}
}

// finalReads gets every key and counter of every cache at its leader,
// once the faults are lifted and the cluster had time to settle: a write
// acknowledged and lost shows there if nowhere else.
func (l *cacheWorkload) finalReads() {
	if l.final {
		return
	}
	l.final = true
	for k := range l.w.cfg.Caches {
		b := l.w.broker(l.w.cp.table[cacheShardID(k)].Assignment.Leader.Broker)
		if b == nil {
			continue
		}
		// Each read a process of its own, past the clients'.
		for i := range cacheKeys {
			l.start(cacheClients+i, k, b, cacheOp{kv: &check.KVInput{Op: check.KVGet, Key: fmt.Sprintf("k%d", i)}})
		}
		for i := range counterKeys {
			l.start(cacheClients+cacheKeys+i, k, b, cacheOp{counter: &check.CounterInput{Op: check.CounterGet, Key: fmt.Sprintf("n%d", i)}})
		}
	}
}

// cacheOp is one operation: a key/value one or a counter one.
type cacheOp struct {
	kv      *check.KVInput
	counter *check.CounterInput
	at      int64 // a conditional put's offset
}

// draw picks an operation of cache k: gets, puts, conditional puts at the
// offset a get returned, deletes, counter adds and gets.
func (l *cacheWorkload) draw(k int) cacheOp {
	key := fmt.Sprintf("k%d", l.rng.IntN(cacheKeys))
	switch r := l.rng.IntN(20); {
	case r < 5:
		return cacheOp{kv: &check.KVInput{Op: check.KVGet, Key: key}}
	case r < 10:
		l.value++
		return cacheOp{kv: &check.KVInput{Op: check.KVPut, Key: key, Value: fmt.Sprintf("v%d", l.value)}}
	case r < 13:
		seen, ok := l.lastRead[fmt.Sprint(k, key)]
		if !ok {
			return cacheOp{kv: &check.KVInput{Op: check.KVGet, Key: key}}
		}
		l.value++
		return cacheOp{kv: &check.KVInput{Op: check.KVCompareAndSet, Key: key, Value: fmt.Sprintf("v%d", l.value), Expected: string(seen.Value)},
			at: seen.Offset}
	case r < 15:
		return cacheOp{kv: &check.KVInput{Op: check.KVDelete, Key: key}}
	}
	n := fmt.Sprintf("n%d", l.rng.IntN(counterKeys))
	if l.rng.IntN(3) == 0 {
		return cacheOp{counter: &check.CounterInput{Op: check.CounterGet, Key: n}}
	}
	return cacheOp{counter: &check.CounterInput{Op: check.CounterAdd, Key: n, Delta: int64(1 + l.rng.IntN(9))}}
}

// start invokes op at b for client c and runs it on a goroutine of its
// own; it returns once that goroutine waits or is done.
func (l *cacheWorkload) start(c, k int, b *broker, op cacheOp) {
	w := l.w
	var in check.Input
	if op.kv != nil {
		in = *op.kv
	} else {
		in = *op.counter
	}
	h := w.cacheRec[k].Invoke(c, w.nowNs(), in)
	w.stats.CacheOps++
	tag := fmt.Sprintf("cop c%d/%d", k, h.ID())
	w.trace.add("%s p%d %v at %s", tag, c, in, b.id)
	if !b.up() || b.caches == nil {
		h.Fail(w.nowNs(), b.id+" is down")
		return
	}
	ch, err := b.caches.Cache(cacheID(k))
	if err != nil {
		h.Fail(w.nowNs(), err.Error())
		return
	}
	if c < cacheClients {
		l.busy[c] = true
	}
	done := func(o cacheOutcome) {
		at := w.nowNs()
		w.inbox.put(tag, func() {
			if c < cacheClients {
				l.busy[c] = false
			}
			l.complete(k, h, op, o, at, tag)
		})
	}
	sem := b.cacheCalls[k]
	go func() {
		sem <- struct{}{} // one call into the cache at a time (cacheCalls)
		runCacheOp(ch, op, done)
		<-sem
	}()
	synctest.Wait() // it runs to a wait before anything else happens
}

// cacheOutcome is what an operation's answer said.
type cacheOutcome struct {
	out     check.Output
	item    cache.Item // a get's, for the conditional puts after it
	applied bool       // false with err: the answer says nothing was applied
	err     error
}

// runCacheOp runs op on ch and tells done its outcome, on the goroutine
// the answer comes on.
func runCacheOp(ch *cache.Cache, op cacheOp, done func(cacheOutcome)) {
	if op.counter != nil {
		runCounterOp(ch, *op.counter, done)
		return
	}
	in := *op.kv
	key := []byte(in.Key)
	switch in.Op {
	case check.KVGet:
		it, err := ch.Get(key, nil)
		done(cacheOutcome{out: check.KVOutput{Found: it.Found, Value: string(it.Value)}, item: it, err: err, applied: !refused(err)})
	case check.KVPut, check.KVCompareAndSet:
		opts := cache.PutOptions{}
		if in.Op == check.KVCompareAndSet {
			opts.Cond = cache.Condition{Kind: cache.CondIfOffset, Offset: op.at}
		}
		cas := in.Op == check.KVCompareAndSet
		ww := writeWaiter(func(wr cache.Written, err error) { done(writeOutcome(cas, wr, err, true)) })
		if err := ch.PutAsync(key, []byte(in.Value), opts, ww); err != nil {
			done(writeOutcome(cas, cache.Written{}, err, false))
		}
	case check.KVDelete:
		ww := writeWaiter(func(wr cache.Written, err error) { done(writeOutcome(false, wr, err, true)) })
		if err := ch.DeleteAsync(key, cache.Condition{}, ww); err != nil {
			done(writeOutcome(false, cache.Written{}, err, false))
		}
	}
}

// writeOutcome is a put's, a conditional put's or a delete's outcome: a
// refused condition observed the key's state (Ok, not applied); a
// refusal returned before anything was appended, a not_leader, says
// nothing was applied; any other error (no_quorum, a stopped shard, a
// waiter's not_leader after the append) may have been.
func writeOutcome(cas bool, wr cache.Written, err error, told bool) cacheOutcome {
	var pre *cache.PreconditionError
	switch {
	case cas && errors.As(err, &pre):
		return cacheOutcome{out: check.KVOutput{Found: false}}
	case err != nil:
		return cacheOutcome{err: err, applied: told || !refused(err)}
	case cas:
		return cacheOutcome{out: check.KVOutput{Found: true}}
	}
	return cacheOutcome{out: check.KVOutput{Found: wr.Existed}}
}

// refused is true of the not_leader refusal.
func refused(err error) bool {
	var nl *engine.NotLeaderError
	return errors.As(err, &nl)
}

func runCounterOp(ch *cache.Cache, in check.CounterInput, done func(cacheOutcome)) {
	key := []byte(in.Key)
	if in.Op == check.CounterGet {
		v, err := ch.CounterGet(key)
		done(cacheOutcome{out: check.CounterOutput{Value: v.Sum}, err: err, applied: !refused(err)})
		return
	}
	cw := counterWaiter(func(v cache.CounterValue, err error) {
		done(cacheOutcome{out: check.CounterOutput{Value: v.Sum}, err: err, applied: true})
	})
	if err := ch.CounterAddAsync(key, in.Delta, cw); err != nil {
		done(cacheOutcome{err: err, applied: !refused(err)})
	}
}

type writeWaiter func(cache.Written, error)

func (f writeWaiter) CacheWritten(w cache.Written, err error) { f(w, err) }

type counterWaiter func(cache.CounterValue, error)

func (f counterWaiter) CounterAdded(v cache.CounterValue, err error) { f(v, err) }

// complete records op's outcome, on the simulator's goroutine.
func (l *cacheWorkload) complete(k int, h check.Handle, op cacheOp, o cacheOutcome, at int64, tag string) {
	w := l.w
	switch {
	case o.err == nil:
		w.stats.CacheOk++
		h.Ok(at, o.out)
		if op.kv != nil && op.kv.Op == check.KVGet && o.item.Found {
			l.lastRead[fmt.Sprint(k, op.kv.Key)] = o.item
		}
		w.trace.add("%s ok %v", tag, o.out)
	case !o.applied:
		h.Fail(at, o.err.Error())
		w.trace.add("%s failed: %v", tag, o.err)
	default:
		h.Unknown(at, o.err.Error())
		w.trace.add("%s unknown: %v", tag, o.err)
	}
}
