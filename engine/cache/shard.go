package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// shard is one shard of a cache: its log, its index, its watches and (for a
// durable cache) its counters. See doc.go for the lock order.
type shard struct {
	c     *Cache
	index int
	logs  *shardlog.Healer // the values log, reopened once space is back (heal.go)
	gen   uint32           // the catalog's generation: a cache of one replica appends at it

	// A replicated shard's part 0, its values log as held by
	// Options.Replication (nil for a cache of one replica; replaced with
	// the log, heal.go), and the generation the shard was last built at
	// while leading (0: not yet), set under writeMu and watchMu
	// (replicate.go).
	valuesPart atomic.Pointer[heldPart]
	led        atomic.Uint32
	// quorum: the cache is replicated at Quorum (quorum.go); committed is
	// then one past the last value its leadership at led committed at
	// Quorum, the end of what reads and watches see (set under watchMu).
	quorum    bool
	committed atomic.Int64
	// parked is the reads waiting for a commit at Quorum (park.go).
	parked parkedReads

	values  *valueCache   // the store's; nil when off
	valueNo atomic.Uint64 // this shard's number there, new at each open and reopen

	// writeMu serializes the shard's writes: the condition check, the
	// index update and the append happen under it, so the index always
	// names the newest write and offsets are assigned in index order.
	writeMu  sync.Mutex
	writeGen uint32      // the generation appends carry: gen, or the one a replicated shard leads at
	lastGen  uint32      // the generation of the log's last record, as the writer knows it
	appended int64       // the offset the next append gets
	pending  pendingRing // writes appended and not yet visible
	frame    []byte      // scratch: a value framed with its expiry
	headBuf  []byte      // scratch: the record an index entry names

	ixMu sync.RWMutex // guards ix and deleting: writers change them holding writeMu too
	ix   index
	// deleting is, on a Quorum shard, the offset of each key's latest
	// delete (by key hash) not known to be committed: a delete takes its
	// key out of ix at once, and a get that then finds no entry waits for
	// that offset to commit, as it waits for a put's, rather than show a
	// delete a failover could take back (quorum.go).
	deleting        map[uint64]int64
	deletingSweepAt int // its size at which those below the watermark are dropped next
	// expiries is set (under writeMu, before the index names it) once any
	// value of the shard has an expiry, and never cleared while it is
	// open: until then no index entry has one, and a writer reads no
	// record before taking writeMu (see preRead).
	expiries atomic.Bool

	// compactMu is held shared by readers that must see every record
	// from an offset on (a watch's catch-up, a snapshot), and exclusively
	// by the swap of a compaction, so such a reader checks the log's
	// CompactedThrough and reads as one step.
	compactMu        sync.RWMutex
	compactedBytes   atomic.Int64 // log bytes the last compaction left
	compactions      atomic.Int64
	compactRunning   sync.Mutex // one compaction of this shard at a time
	expiredCompacted atomic.Int64

	// visMu and visCond wake readers waiting for a write to become
	// visible; failErr (under visMu, flagged by failed) stops the shard,
	// and refusal is what a write it stops is told.
	visMu   sync.Mutex
	visCond sync.Cond
	failed  atomic.Bool
	failErr error
	refusal error

	watchMu sync.Mutex // guards watches and stopped; taken by onVisible
	watches map[*Watch]struct{}
	stopped error

	endMu    sync.Mutex    // a leaf: guards endMoved
	endMoved chan struct{} // closed when a log moves, once LogEnds handed it out

	counters counterSlot
}

func newShard(c *Cache, index int) *shard {
	sh := &shard{c: c, index: index, gen: c.info.Generation, writeGen: c.info.Generation, ix: newIndex(),
		watches: map[*Watch]struct{}{}, values: c.store.values,
		quorum: c.replicated() && c.info.Config.Consistency == engine.ConsistencyQuorum}
	sh.valueNo.Store(c.store.opened.Add(1))
	sh.parked.init()
	sh.visCond.L = &sh.visMu
	sh.counters.sh = sh
	sh.counters.gen = c.info.Generation
	sh.counters.visCond.L = &sh.counters.visMu
	return sh
}

// log is the values log the shard serves from now.
func (sh *shard) log() *shardlog.Log { return sh.logs.Log() }

// usable returns why the shard stopped serving, or nil.
func (sh *shard) usable() error {
	if !sh.failed.Load() {
		return nil
	}
	sh.visMu.Lock()
	defer sh.visMu.Unlock()
	return sh.failErr
}

// writable is usable for a write, which a stopped shard refuses before
// writing any of it: one stopped for lack of space says so (ErrNoSpace,
// storage_full) whichever of its writes found the disk full.
func (sh *shard) writable() error {
	if !sh.failed.Load() {
		return nil
	}
	sh.visMu.Lock()
	defer sh.visMu.Unlock()
	return sh.refusal
}

// fail stops the shard: its log failed (a failure for lack of space until
// the log is reopened and the index rebuilt from it, heal.go; any other
// until the cache is opened again) or it is closing, which outranks a
// failure. Every waiting reader wakes (a parked one is told err) and every
// later operation returns err.
func (sh *shard) fail(err error) {
	sh.visMu.Lock()
	if sh.failErr == nil || closing(err) && !closing(sh.failErr) {
		sh.failErr, sh.refusal = err, refusalOf(err)
		sh.failed.Store(true)
		if !closing(err) {
			sh.c.store.opts.Logger.Error("cache shard failed; out of space it serves again once space is back, otherwise once the cache is opened again",
				"cache", sh.c.info.ID.String(), "shard", sh.index, "err", err)
		}
	}
	sh.visCond.Broadcast()
	sh.visMu.Unlock()
	sh.settleParked()
}

// closing reports whether err is a shard's stop rather than a failure: the
// store closing, the cache dropped, or the shard released to the broker
// the *engine.NotLeaderError names (placement.go).
func closing(err error) bool { return err == ErrClosed || err == ErrCacheDropped || released(err) }

// refusalOf is what a write refused because of err is told: nothing of it
// was written, so a failure for lack of space is a refusal for it
// (ErrNoSpace), even when the write that found the disk full may have
// been stored.
func refusalOf(err error) error {
	if errors.Is(err, syscall.ENOSPC) && !errors.Is(err, shardlog.ErrNoSpace) {
		return fmt.Errorf("%w: the cache shard waits for its log to be reopened: %w", shardlog.ErrNoSpace, err)
	}
	return err
}

// waitVisible waits until the record at off is visible or the shard stops.
// Only a read racing the write of the same key waits, for one commit (a
// Quorum shard's for its majority, bounded: quorum.go).
func (sh *shard) waitVisible(off int64) error {
	if sh.quorum {
		return sh.waitCommitted(off)
	}
	sh.visMu.Lock()
	defer sh.visMu.Unlock()
	for sh.log().End() <= off && sh.failErr == nil {
		sh.visCond.Wait()
	}
	return sh.failErr
}

// visible is one past the last record readers and watches may see: the
// log's visible end, and for a Quorum shard no further than what its
// leadership committed.
func (sh *shard) visible() int64 {
	end := sh.log().End()
	if sh.quorum {
		end = min(end, sh.committed.Load())
	}
	return end
}

// onVisible runs on the log's committer each time records become visible:
// it wakes waiting readers and whoever waits for the log to move
// (LogEnds), then hands the records to the watches, unless they are a
// follower's (replicate.go: the replica's appends reach no watch) or the
// shard is at Quorum (its watches are handed what commits: onCommitted).
func (sh *shard) onVisible(_, _ int64, records []byte) {
	sh.visMu.Lock()
	sh.visCond.Broadcast()
	sh.visMu.Unlock()
	sh.moved()
	if !sh.quorum && sh.ownRecords() {
		sh.fanOut(records)
	}
}

// readRecord reads the record at off into dst (appending) without waiting.
// present is false when no record has that offset any more (compaction
// removed it).
func (sh *shard) readRecord(off int64, dst []byte) (r segment.Record, out []byte, present bool, err error) {
	out, _, err = sh.logs.Read(off, 1, dst)
	if err != nil {
		return segment.Record{}, dst, false, err
	}
	it := segment.NewIter(out[len(dst):])
	r, ok := it.Next()
	if !ok || r.Offset != off {
		return segment.Record{}, out, false, it.Err()
	}
	return r, out, true, nil
}

// stop ends the shard's watches with err and closes its logs, stopping
// a reopen in progress; every later operation on it, counters included,
// returns err.
func (sh *shard) stop(err error) error {
	sh.fail(err)
	sh.endWatches(err)
	sh.compactRunning.Lock() // let a running compaction finish first
	defer sh.compactRunning.Unlock()
	errs := sh.counters.close(err) // its part let go of first, then the shard's primary
	if p := sh.primary(); p != nil {
		p.release() // the replica lets go of the log before it closes
	}
	if cerr := sh.logs.Close(); errs == nil {
		errs = cerr
	}
	return errs
}

// pendingRing holds the key and expiry of each write appended and not yet
// visible, so a writer can tell which key an index entry names without
// waiting for the record to become readable. Only the shard's writer
// appends to its log, so the offsets held are dense. Guarded by writeMu;
// the slots' key buffers are reused, so steady state allocates nothing.
type pendingRing struct {
	first int64 // offset of slots[head]
	head  int
	n     int
	slots []pendingWrite
}

type pendingWrite struct {
	key       []byte
	expiresAt int64
}

// trim forgets the writes below visible.
func (p *pendingRing) trim(visible int64) {
	for p.n > 0 && p.first < visible {
		p.head = (p.head + 1) % len(p.slots)
		p.first++
		p.n--
	}
}

// push remembers the write at off, which must follow the last one held.
func (p *pendingRing) push(off int64, key []byte, expiresAt int64) {
	if p.n == 0 {
		p.first = off
	} else if off != p.first+int64(p.n) {
		panic("felix/cache: broken invariant: the shard's writes are not dense in its log")
	}
	if p.n == len(p.slots) {
		p.grow()
	}
	s := &p.slots[(p.head+p.n)%len(p.slots)]
	s.key = append(s.key[:0], key...)
	s.expiresAt = expiresAt
	p.n++
}

func (p *pendingRing) grow() {
	next := make([]pendingWrite, max(64, 2*len(p.slots)))
	for i := range p.n {
		next[i] = p.slots[(p.head+i)%len(p.slots)]
	}
	p.slots, p.head = next, 0
}

// get returns the write at off if it is held.
func (p *pendingRing) get(off int64) (pendingWrite, bool) {
	if p.n == 0 || off < p.first || off >= p.first+int64(p.n) {
		return pendingWrite{}, false
	}
	return p.slots[(p.head+int(off-p.first))%len(p.slots)], true
}
