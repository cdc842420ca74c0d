package netio

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// Bounds of the cache workers: the operations handed off the loops (a get
// racing a write of its shard, which may wait for that write's commit;
// counter operations, whose first on a shard opens its log). A get or
// counter get of a Quorum cache that would wait for a commit is parked on
// its shard instead (the job's ReadWait; at most 1,024 a shard, beyond
// that overloaded): its worker moves on, and the job comes back to a
// worker when the write commits (asked again) or is answered from where
// it was told its end (no_quorum at the publish timeout, not_leader, the
// shard's stop), as a write's acknowledgement is.
const (
	// cacheJobsMax bounds the operations waiting for a worker, across
	// every connection; past it a request is refused with overloaded.
	cacheJobsMax = 4096
	// cacheWorkersMax bounds the worker goroutines; they start on demand
	// and end after cacheWorkerIdle without work.
	cacheWorkersMax = 64
	cacheWorkerIdle = 10 * time.Second
	// cacheJobKeepBytes is the largest value buffer a pooled job keeps.
	cacheJobKeepBytes = 64 << 10
	// cacheParkedMax bounds the gets and counter gets parked for a
	// Quorum commit across the server, cacheParkedPerConnMax those of one
	// connection (and each shard parks at most 1,024 of its own:
	// cache.ErrReadsParkedFull); beyond, one that would wait is refused
	// overloaded.
	cacheParkedMax        = 16384
	cacheParkedPerConnMax = 1024
)

// errCacheParkedFull refuses a read that would wait for a Quorum commit
// while cacheParkedMax already do, or cacheParkedPerConnMax of its
// connection's.
var errCacheParkedFull = &wire.Error{Code: wire.CodeOverloaded,
	Message: "too many cache reads are waiting for their writes to reach a majority of the replicas",
	Details: wire.Details{RetryAfterMillis: 100}}

// errCacheOverloaded refuses an operation no worker can take now.
var errCacheOverloaded = &wire.Error{Code: wire.CodeOverloaded, Message: "too many cache operations waiting for a worker",
	Details: wire.Details{RetryAfterMillis: 10}}

type cacheJobKind uint8

const (
	jobGet cacheJobKind = iota + 1
	jobCounterAdd
	jobCounterGet
)

// cacheJob is one operation handed to a worker: a unit of the server's
// work (counted by admit), answered on the connection when done. Pooled.
type cacheJob struct {
	kind      cacheJobKind
	c         *conn
	requestID uint64
	h         *cacheHandle
	key       []byte // the job's own copy of the key
	delta     int64
	value     []byte       // a get's scratch
	parties   atomic.Int32 // an add's: the call and its answer, each done with the job
	// wait is a get's record while it is parked on its shard for a
	// Quorum commit (cache.GetAsync): the job is then the store's until
	// CacheReadReady.
	wait cache.ReadWait
}

var cacheJobs = sync.Pool{New: func() any { return new(cacheJob) }}

// newCacheJob takes a pooled job and copies the key into it.
func newCacheJob(kind cacheJobKind, c *conn, requestID uint64, h *cacheHandle, key []byte) *cacheJob {
	j := cacheJobs.Get().(*cacheJob)
	j.kind, j.c, j.requestID, j.h = kind, c, requestID, h
	j.key = append(j.key[:0], key...)
	j.wait.Begin(j)
	return j
}

// release ends the job's unit of work and pools it.
func (j *cacheJob) release() {
	s := j.c.s
	if cap(j.value) > cacheJobKeepBytes {
		j.value = nil
	}
	j.c, j.h, j.delta = nil, nil, 0
	cacheJobs.Put(j)
	s.work.done()
}

// offload queues j for a worker, starting one if none is idle. It reports
// false, and keeps nothing, when the queue is full.
func (fe *cacheFrontend) offload(j *cacheJob) bool {
	select {
	case fe.jobs <- j:
	default:
		return false
	}
	if fe.idle.Load() == 0 {
		fe.spawn()
	}
	return true
}

func (fe *cacheFrontend) spawn() {
	for n := fe.workers.Load(); n < cacheWorkersMax; n = fe.workers.Load() {
		if fe.workers.CompareAndSwap(n, n+1) {
			go fe.work()
			return
		}
	}
}

// work is a worker goroutine: it runs jobs until none came for
// cacheWorkerIdle. A job queued as it decides to end is still taken (the
// queue is looked at after the count drops), so none is stranded.
func (fe *cacheFrontend) work() {
	idle := time.NewTimer(cacheWorkerIdle)
	defer idle.Stop()
	for {
		fe.idle.Add(1)
		select {
		case j := <-fe.jobs:
			fe.idle.Add(-1)
			j.run()
			idle.Reset(cacheWorkerIdle)
		case <-idle.C:
			fe.idle.Add(-1)
			fe.workers.Add(-1)
			if len(fe.jobs) == 0 {
				return
			}
			fe.workers.Add(1)
			idle.Reset(cacheWorkerIdle)
		}
	}
}

// run does the job on a worker and answers it.
func (j *cacheJob) run() {
	if j.do(true) {
		j.release()
	}
}

// do performs the job and answers it; it reports whether the job is done
// with (a counter add's is released by whichever of the call and its
// answer finishes last). mayRedo allows one more try, with a fresh
// handle, when the cache turns out dropped and one of its name exists
// again.
func (j *cacheJob) do(mayRedo bool) bool {
	switch j.kind {
	case jobGet:
		fe, c, rw := j.c.s.caches, j.c, j.parkable()
		item, wait, err := j.h.c.GetAsync(j.key, j.value[:0], rw)
		switch {
		case wait && rw == nil:
			return j.refuseParked()
		case wait:
			return false // parked (j may be another worker's already): CacheReadReady brings it back
		case rw != nil:
			fe.unreserve(c) // answered without a park
		}
		if err != nil && j.retry(mayRedo, err) {
			return j.do(false)
		}
		j.c.sendCacheValue(j.requestID, item, err)
		if item.Value != nil {
			j.value = item.Value[:0]
		}
	case jobCounterGet:
		var r cache.CounterReader
		fe, c := j.c.s.caches, j.c
		if j.parkable() != nil {
			r = j
		}
		v, wait, err := j.h.c.CounterGetAsync(j.key, r)
		switch {
		case wait && r == nil:
			return j.refuseParked()
		case wait:
			return false // parked: CounterRead answers it
		case r != nil:
			fe.unreserve(c)
		}
		if err != nil && j.retry(mayRedo, err) {
			return j.do(false)
		}
		j.c.sendCounterValue(j.requestID, v, err)
	case jobCounterAdd:
		// The answer can come before CounterAddAsync has returned (and
		// stopped reading the key): the job goes back to the pool only
		// once both are done with it.
		j.parties.Store(2)
		err := j.h.c.CounterAddAsync(j.key, j.delta, j)
		if err == nil {
			j.partyDone()
			return false
		}
		if j.retry(mayRedo, err) {
			return j.do(false)
		}
		j.c.sendError(j.requestID, cacheToWire(err))
	}
	return true
}

// retry reports whether err says the job's cache was dropped while one of
// its name exists now, and if so points the job at the new cache.
func (j *cacheJob) retry(mayRedo bool, err error) bool {
	fe := j.c.s.caches
	if !mayRedo || !fe.redo(j.h, err) {
		return false
	}
	h, herr := fe.handleOf(j.h.id)
	if herr != nil {
		return false
	}
	j.h = h
	return true
}

// CounterAdded answers a COUNTER_ADD once the log acknowledges it; on the
// counters log's committer.
func (j *cacheJob) CounterAdded(v cache.CounterValue, err error) {
	j.c.sendCounterValue(j.requestID, v, err)
	j.partyDone()
}

func (j *cacheJob) partyDone() {
	if j.parties.Add(-1) == 0 {
		j.release()
	}
}

// parkable returns the job's ReadWait with a park of it reserved (see
// reserve), or nil: the cache is not at Quorum (its reads never park), or
// the server or the job's connection parks its most (a read that would
// wait is then refused rather than parked).
func (j *cacheJob) parkable() *cache.ReadWait {
	if !j.h.quorum || !j.c.s.caches.reserve(j.c) {
		return nil
	}
	return &j.wait
}

// refuseParked answers a read that would wait but could not be parked,
// and reports it done with.
func (j *cacheJob) refuseParked() bool {
	j.c.s.cfg.Metrics.CacheReadsParkRefused.Add(1)
	j.c.sendError(j.requestID, errCacheParkedFull)
	return true
}

// reserve counts a park of c's ahead of the call that may make it (so a
// tell that comes before that call returns finds it counted), reporting
// false, and counting nothing, once the server parks cacheParkedMax or c
// cacheParkedPerConnMax. A reservation not used (the read answered at
// once) is given back with unreserve, as is a park once told.
func (fe *cacheFrontend) reserve(c *conn) bool {
	if fe.parked.Add(1) > cacheParkedMax {
		fe.parked.Add(-1)
		return false
	}
	fe.parkMu.Lock()
	n := fe.parkedBy[c]
	if n < cacheParkedPerConnMax {
		fe.parkedBy[c] = n + 1
	}
	fe.parkMu.Unlock()
	if n >= cacheParkedPerConnMax {
		fe.parked.Add(-1)
		return false
	}
	fe.s.cfg.Metrics.CacheReadsParked.Add(1)
	return true
}

func (fe *cacheFrontend) unreserve(c *conn) {
	fe.parked.Add(-1)
	fe.s.cfg.Metrics.CacheReadsParked.Add(-1)
	fe.parkMu.Lock()
	if n := fe.parkedBy[c] - 1; n > 0 {
		fe.parkedBy[c] = n
	} else {
		delete(fe.parkedBy, c)
	}
	fe.parkMu.Unlock()
}

// CacheReadReady is told once a parked get may go on, on the goroutine
// that settled it (the replica's, the shard's recheck timer, a stop): the
// write it waited for committed, and a worker asks it again (with the
// same ReadWait, so it keeps its deadline); or err is its answer.
func (j *cacheJob) CacheReadReady(err error) {
	j.c.s.caches.unreserve(j.c)
	if err != nil {
		j.c.sendCacheValue(j.requestID, cache.Item{}, err)
		j.release()
		return
	}
	if !j.c.s.caches.offload(j) {
		j.c.sendError(j.requestID, errCacheOverloaded)
		j.release()
	}
}

// CounterRead answers a parked COUNTER_GET, on the goroutine its part's
// vouch came on.
func (j *cacheJob) CounterRead(v cache.CounterValue, err error) {
	j.c.s.caches.unreserve(j.c)
	j.c.sendCounterValue(j.requestID, v, err)
	j.release()
}
