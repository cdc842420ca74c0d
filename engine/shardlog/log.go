package shardlog

import (
	"sync"
	"sync/atomic"
	"time"
)

// Log is one shard's log. Append, Read and the accessors are safe for
// concurrent use; Truncate must not run concurrently with Append.
type Log struct {
	opts Options

	// mu guards the append side. Lock order: mu before wmu.
	mu      sync.Mutex
	space   sync.Cond // appenders waiting for buffer room
	work    sync.Cond // the committer waiting for records
	idle    sync.Cond // Truncate waiting for the committer to go idle
	fill    *buffer   // the buffer appenders fill
	spare   *buffer   // the other buffer; nil while the committer writes it
	tail    *seg      // the segment appenders are placing records in
	next    int64     // offset the next appended record gets
	lastGen uint32
	waiters waitQueue
	poison  error
	closing bool
	// sched is Options.FlushScheduler under OnCommit, else nil. due: the
	// log waits in the scheduler's next round; committerTurn: the
	// scheduler handed the next flush to the committer (a rollover).
	sched         *FlushScheduler
	due           bool
	committerTurn bool

	// wmu guards rollover, the active segment and watermark publication,
	// against the syncer, retention and truncation.
	wmu    sync.Mutex
	active *seg // the last segment with a file: written by the committer

	segs    atomic.Pointer[segList]
	start   atomic.Int64 // first offset the log holds
	visible atomic.Int64 // offsets below are readable and acknowledged
	written atomic.Int64 // offsets below are in the page cache
	durable atomic.Int64 // offsets below are fsynced
	// durablePoint is the byte position matching durable (under wmu).
	durablePoint point
	// retiring holds retired segments not yet sealed, oldest first (under
	// wmu; None and Periodic only: retire.go). sealMu makes their sealing
	// one at a time and in order.
	retiring []*seg
	sealMu   sync.Mutex
	point    pointFile

	ready    []pending // committer scratch: waiters to call
	acks     AckBatch  // committer scratch: the flush's deferred work
	prep     preparer
	recovery RecoveryInfo
	counters counters

	compaction compactState

	verify  verifier     // the background verification of sealed segments (verify.go)
	offline offlineState // the damage that took the log offline, if any (offline.go)

	// syncAhead asks the background loop to sync the active segment:
	// the committer sends (never blocking) each time syncAheadBytes
	// were written unsynced. unsynced is the committer's count of bytes
	// written since the last rollover or sync-ahead request.
	syncAhead chan struct{}
	unsynced  int64

	committerDone chan struct{}
	stopMaintain  chan struct{}
	maintainDone  chan struct{}
	// stopped is closed once the first Close or Reopen has stopped every
	// writer (stopWriting); released makes the release of the files once.
	stopped  chan struct{}
	released sync.Once
}

// Entry is one record to append. Key and Value are copied; the caller may
// reuse them once Append returns. A zero Timestamp means now.
type Entry struct {
	Key       []byte
	Value     []byte
	Timestamp int64
	Flags     uint16
}

// RecoveryInfo is what Open found and repaired.
type RecoveryInfo struct {
	Took          time.Duration
	Segments      int
	Records       int64 // records in the log after recovery (offsets, where compaction dropped some)
	TornBytes     int64 // bytes of an unfinished write cut from the tail
	RemovedFiles  []string
	IndexRebuilds int
}

// Open opens the log in opts.Dir, creating it when it does not exist, and
// recovers it: a torn tail is cut off; any other damage it finds refuses
// to open with a *segment.CorruptionError. Sealed segments open on their
// index and are verified in the background after Open returns (verify.go):
// damage found there takes the log offline (offline.go). Opening a log
// again after a clean or unclean stop is idempotent. Options it cannot
// honour (SegmentBytes past SegmentBytesMax) are refused with
// ErrInvalidOptions before any IO.
func Open(opts Options) (*Log, error) {
	o := opts.withDefaults()
	if err := o.check(); err != nil {
		return nil, err
	}
	l := &Log{opts: o, committerDone: make(chan struct{}), stopMaintain: make(chan struct{}), maintainDone: make(chan struct{}),
		stopped: make(chan struct{}), syncAhead: make(chan struct{}, 1), verify: verifier{stop: make(chan struct{}), done: make(chan struct{})}}
	l.space.L, l.work.L, l.idle.L = &l.mu, &l.mu, &l.mu
	began := o.Now()
	if err := l.recover(); err != nil {
		if l.point.f != nil {
			l.point.f.Close()
		}
		l.releaseAll()
		return nil, err
	}
	l.recovery.Took = o.Now().Sub(began)
	l.fill, l.spare = newBuffer(o.BufferBytes), newBuffer(o.BufferBytes)
	l.fill.reset(l.next)
	l.prep.init(l)
	if o.Fsync.Kind == FsyncOnCommit {
		l.sched = o.FlushScheduler
	}
	go l.commitLoop()
	go l.maintainLoop()
	l.verify.pending.Store(int64(len(l.verify.queue)))
	go l.verifyLoop()
	o.Logger.Info("shard log open", "dir", o.Dir, "fsync", o.Fsync.String(), "start", l.start.Load(),
		"next", l.next, "segments", l.recovery.Segments, "torn_bytes", l.recovery.TornBytes, "took", l.recovery.Took)
	return l, nil
}

// Close writes and syncs everything appended, then releases the files.
// Appends after Close fail with ErrClosed. Closing again, or after Reopen,
// only releases what is left.
func (l *Log) Close() error {
	err := l.stopWriting()
	l.released.Do(l.releaseAll)
	return err
}

// stopWriting writes and syncs everything appended (unless the log failed)
// and stops every goroutine that writes, leaving the segment files open for
// reads. The first call does it; later ones wait for it and return nil.
func (l *Log) stopWriting() error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		<-l.stopped
		return nil
	}
	defer close(l.stopped)
	l.closing = true
	l.work.Broadcast()
	l.space.Broadcast()
	l.mu.Unlock()
	close(l.verify.stop)
	<-l.committerDone
	close(l.stopMaintain)
	<-l.maintainDone
	<-l.verify.done
	l.prep.stop()
	var err error
	if l.poisonErr() == nil {
		if err = l.syncActive(); err == nil {
			l.checkpoint()
		}
	}
	if l.point.f != nil {
		l.point.f.Close()
	}
	return err
}

func (l *Log) poisonErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.poison
}

func (l *Log) releaseAll() {
	if p := l.segs.Load(); p != nil {
		for _, s := range *p {
			s.release(l.opts.FS)
		}
		l.segs.Store(&segList{})
	}
}

// Start is the first offset the log holds.
func (l *Log) Start() int64 { return l.start.Load() }

// End is one past the last acknowledged (visible) offset.
func (l *Log) End() int64 { return l.visible.Load() }

// Durable is one past the last offset known to be fsynced.
func (l *Log) Durable() int64 { return l.durable.Load() }

// LastGeneration is the generation of the last appended record.
func (l *Log) LastGeneration() uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastGen
}

// Recovery reports what Open found.
func (l *Log) Recovery() RecoveryInfo { return l.recovery }

// Mode is the log's FsyncMode.
func (l *Log) Mode() FsyncMode { return l.opts.Fsync }
