package replica

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster/failover"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// Consistency is when a leader acknowledges a write (the stream's
// level): the control plane's promotion weighs the same one, so it is
// that type.
type Consistency = failover.Consistency

// The two levels of the contract.
const (
	// ConsistencyLeader acknowledges once the leader has the write at its
	// FsyncMode; followers catch up behind it.
	ConsistencyLeader = failover.Leader
	// ConsistencyQuorum acknowledges once the quorum watermark passes the
	// write: a majority of the replicas has it at their FsyncMode.
	ConsistencyQuorum = failover.Quorum
)

var (
	// The errors a replicated write may be refused with carry their wire
	// code (errors.As to a wire.Code), which is what a client is answered.
	//
	// ErrNoQuorum refuses a Quorum write no majority acknowledged within
	// the publish timeout. It does not say the write failed: it may be
	// stored, and may yet be read; this broker cannot vouch for it.
	ErrNoQuorum = fmt.Errorf("%w: no majority of the replicas acknowledged the write in time; this broker cannot vouch for it (it may still be stored)", wire.CodeNoQuorum)
	// ErrNotLeader refuses an acknowledgement this replica may no longer
	// give: its lease ended, or a newer generation fenced it. The write's
	// outcome is unknown: the new leader decides.
	ErrNotLeader = fmt.Errorf("%w: this broker does not lead the shard any more (its lease ended, or a newer generation fenced it); nothing of the write was stored", wire.CodeNotLeader)
	// ErrUnvouched refuses a write this leader had stored and shipped but
	// may no longer acknowledge: its lease ran out (or was never granted)
	// before the write's deadline, or a newer generation deposed it, or
	// the leadership ended. The write may be stored (the new leader
	// decides), so it carries the ambiguous no_quorum code: a client must
	// not take it for "not applied", as it would not_leader.
	ErrUnvouched = fmt.Errorf("%w: this broker's leadership of the shard ended (or its lease lapsed) before it could vouch for the write; it may be stored", wire.CodeNoQuorum)
	// ErrLostLeadership refuses Node.Lead for a replica whose last stop
	// may have lost its unsynced tail, at a generation it held before: the
	// control plane replaces it at a new generation.
	ErrLostLeadership = fmt.Errorf("%w: a leadership resumed after an unclean stop", wire.CodeNotLeader)
	// ErrLeaderClosed ends the writes pending when a Leader is closed: as
	// ErrUnvouched, their outcome is unknown.
	ErrLeaderClosed = fmt.Errorf("%w: the shard's leadership on this broker ended before it could vouch for the write; it may be stored", wire.CodeNoQuorum)
)

// FlagGenerationStart marks the record a new leader appends first in its
// generation (CLUSTER.md: commit in the new generation before serving).
// It carries no key and no value and is a control record, which readers
// skip.
const FlagGenerationStart = segment.FlagGenerationStart | segment.FlagControl

// LeaderConfig is what a Leader is started with.
type LeaderConfig struct {
	Ref         wire.LogRef // copied
	Log         Log
	Generation  uint32   // this leadership's generation
	Followers   []string // the other replicas' broker ids
	Transport   peer.Transport
	Consistency Consistency
	// Lease is this log's lease on this broker: every acknowledgement
	// checks it after the write is durable and before the ack is sent.
	Lease *Lease
	// Commit is the commit watermark this replica knew before it led (what
	// it learnt as a follower); readers see up to it until the new
	// generation's start record commits.
	Commit int64
	// Timeout bounds a Quorum write's wait for a majority (the publish
	// timeout): past it the write is refused with ErrNoQuorum.
	Timeout time.Duration
	// OnCommit receives the records that became acknowledgeable, in order
	// (the shard's subscribers). It runs on the leader's goroutine.
	OnCommit func(first, next int64, records []byte)
	// OnAck, when set, is told of every append acknowledged OK before its
	// waiter is handed the ack (AckReport): on whichever goroutine settles
	// it, one at a time, in offset order. It must not block. Nil (what a
	// broker runs with unless a test journals its acks) costs one nil
	// check a settle.
	OnAck func(AckReport)
	// BatchBytes bounds one REPLICATE's records (default 256 KiB);
	// Inflight the batches in flight per follower (default 16).
	BatchBytes int
	Inflight   int
	// External: the log's owner appends to it directly, at this
	// generation, and acknowledges its own writes (a secondary part, a
	// cache's values: engine/replication_part.go). The leadership writes no
	// start record, takes no Append, and ships what the owner appended.
	External bool
}

// Default sizes of a leader's pipeline.
const (
	DefaultBatchBytes = 256 << 10
	DefaultInflight   = 16
	DefaultTimeout    = 5 * time.Second
	// tick is how often a leader looks at timeouts and idle followers.
	tick = 20 * time.Millisecond
	// retryAfter is the pause before resending to a follower that failed
	// or could not take a batch yet.
	retryAfter = 10 * time.Millisecond
)

// Leader is one log's leadership on this broker: it appends locally,
// ships every record to the followers, keeps the commit watermark (the
// quorum watermark for a Quorum log, the local end for a Leader one) and
// acknowledges each append once the watermark passes it and the lease
// still holds. Appends come from any goroutine; acknowledgements settle
// where progress is made (settle); one goroutine of its own ships to the
// followers behind, hands committed records to OnCommit, and looks at
// timeouts and leases every tick.
type Leader struct {
	cfg LeaderConfig
	gen uint32

	amu       sync.Mutex // serializes appends, so the queue is in offset order
	pmu       sync.Mutex // guards queue, failed
	queue     []pendingAck
	queueRoom []pendingAck // the queue's array, reused each time it empties
	failed    error        // the local log failed: every append after it fails too
	deposed   atomic.Bool

	commit atomic.Int64
	// genStartNext is one past the generation's start record: the commit
	// watermark moves only once it reaches it (MaxInt64 until the start
	// record has its offset).
	genStartNext atomic.Int64

	fmu       sync.Mutex // guards followers and buf
	followers []*remote
	buf       []byte

	ackMu      sync.Mutex        // one settle at a time: acknowledgements in offset order
	acks       shardlog.AckBatch // under ackMu: the writes acknowledge's waiters deferred
	delivered  int64             // what OnCommit was handed up to; the leader goroutine's
	deliverBuf []byte            // OnCommit's read buffer, the leader goroutine's

	wake chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

// pendingAck is an append waiting for the commit watermark.
type pendingAck struct {
	first, last int64
	deadline    time.Time
	w           shardlog.Waiter
}

// NewLeader starts a leadership: it appends the generation's start record
// and starts shipping.
func NewLeader(cfg LeaderConfig) (*Leader, error) {
	if cfg.Consistency != ConsistencyLeader && cfg.Consistency != ConsistencyQuorum {
		return nil, fmt.Errorf("felix/replica: leader of %v: consistency %v", cfg.Ref, cfg.Consistency)
	}
	if cfg.Lease == nil || cfg.Log == nil || cfg.Transport == nil || cfg.Generation == 0 {
		return nil, fmt.Errorf("felix/replica: leader of %v: a log, a transport, a lease and a generation are required", cfg.Ref)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.BatchBytes <= 0 {
		cfg.BatchBytes = DefaultBatchBytes
	}
	if cfg.Inflight <= 0 {
		cfg.Inflight = DefaultInflight
	}
	cfg.Ref = cloneRef(cfg.Ref)
	l := &Leader{cfg: cfg, gen: cfg.Generation, wake: make(chan struct{}, 1), done: make(chan struct{})}
	l.commit.Store(min(cfg.Commit, cfg.Log.End()))
	l.delivered = l.commit.Load()
	l.genStartNext.Store(math.MaxInt64)
	for _, id := range cfg.Followers {
		l.followers = append(l.followers, newRemote(l, id))
	}
	if cfg.External && cfg.Consistency == ConsistencyLeader {
		// What the owner appends from here on carries this generation: the
		// offsets from the log's next one are this leadership's, as they
		// are past a start record.
		l.genStartNext.Store(nextOffset(cfg.Log) + 1)
	} else {
		// A Quorum leadership, External ones included, commits in its own
		// generation before anything counts committed (Raft's figure 8):
		// an External one appends the start record before its owner can
		// see it lead (Part.Leading), so the owner's first append in this
		// generation goes after it.
		first, err := cfg.Log.Append([]shardlog.Entry{{Flags: FlagGenerationStart, Timestamp: time.Now().UnixNano()}}, l.gen, l)
		if err != nil {
			return nil, fmt.Errorf("felix/replica: leader of %v: the generation's start record: %w", cfg.Ref, err)
		}
		l.genStartNext.Store(first + 1)
		l.settle() // the start record may have committed already
	}
	l.wg.Add(1)
	go l.run()
	return l, nil
}

// Generation is the leadership's generation.
func (l *Leader) Generation() uint32 { return l.gen }

// Append appends entries locally and tells w once they are acknowledged
// at the log's consistency (or refused: ErrNoQuorum and ErrUnvouched,
// whose writes may be stored; the log's own failure). ErrNotLeader, when
// it returns it, stored nothing. The gen argument of the engine's log interface is
// ignored: a leader writes its own generation. It fills in the Timestamp
// of entries that have none (the time of the append), so that the records
// it ships at once to the followers caught up with it, before its own
// fsync, are byte for byte those of its log.
func (l *Leader) Append(entries []shardlog.Entry, _ uint32, w shardlog.Waiter) (int64, error) {
	if l.deposed.Load() {
		return 0, ErrNotLeader
	}
	if l.cfg.External {
		return 0, errExternal
	}
	stampEntries(entries, time.Now().UnixNano())
	l.amu.Lock()
	defer l.amu.Unlock()
	first, err := l.cfg.Log.Append(entries, l.gen, l)
	if err != nil {
		return first, err
	}
	l.shipAppended(first, entries)
	l.pmu.Lock()
	l.queue = append(l.queue, pendingAck{first: first, last: first + int64(len(entries)) - 1,
		deadline: time.Now().Add(l.cfg.Timeout), w: w})
	if cap(l.queue) > cap(l.queueRoom) {
		l.queueRoom = l.queue[:0:cap(l.queue)] // it grew: keep the larger array
	}
	l.pmu.Unlock()
	l.settle() // the log may have committed it already
	l.signal()
	return first, nil
}

// Committed is the local log's acknowledgement of an append at its
// FsyncMode (the leader is the log's waiter): it settles what that
// acknowledges (a Leader log's appends, at once) and wakes the leader's
// goroutine, which ships. It never waits on a disk.
func (l *Leader) Committed(first, _ int64, err error) {
	if err != nil {
		l.pmu.Lock()
		if l.failed == nil {
			l.failed = fmt.Errorf("felix/replica: the leader's log failed at %d: %w", first, err)
		}
		l.pmu.Unlock()
	}
	l.settle()
	l.signal()
}

// Vouch tells w (Committed(first, last, err)) once the records of an
// External leadership's log up to last are acknowledgeable at its
// consistency and its lease holds: the owner appended them at this
// leadership's generation and its own log has them at its FsyncMode. It is
// refused as an append is: ErrNoQuorum past the timeout without a
// majority, ErrUnvouched once the lease lapsed past it or the leadership
// was deposed, ErrLeaderClosed when it ends. The owner vouches in offset
// order (its log's acknowledgements come so). It never waits: w is told
// on whichever goroutine makes the progress.
func (l *Leader) Vouch(first, last int64, w shardlog.Waiter) {
	select {
	case <-l.done:
		w.Committed(first, last, ErrLeaderClosed)
		return
	default:
	}
	if l.deposed.Load() {
		w.Committed(first, last, ErrUnvouched)
		return
	}
	l.pmu.Lock()
	l.queue = append(l.queue, pendingAck{first: first, last: last, deadline: time.Now().Add(l.cfg.Timeout), w: w})
	if cap(l.queue) > cap(l.queueRoom) {
		l.queueRoom = l.queue[:0:cap(l.queue)]
	}
	l.pmu.Unlock()
	l.settle()
	l.signal() // the owner's log has the records now: ship them (Appended came before they were readable)
	select {
	case <-l.done: // closed meanwhile: Close's failAll may have run before the append
		l.failAll(ErrLeaderClosed)
	default:
	}
}

// errExternal refuses an Append to a leadership whose log's owner appends.
var errExternal = errors.New("felix/replica: this log's owner appends to it directly; its leadership only ships")

// Appended tells an External leadership that its owner appended: it
// ships now rather than at its next tick.
func (l *Leader) Appended() { l.signal() }

// Serving reports whether the leadership may acknowledge at now: it was
// neither closed nor deposed, and its lease holds for its generation.
func (l *Leader) Serving(now time.Time) bool {
	select {
	case <-l.done:
		return false // closed: the leadership ended, or its part is no longer held
	default:
	}
	return !l.deposed.Load() && l.cfg.Lease.Valid(now, uint64(l.gen))
}

// CompactBelow is the offset below which every follower acknowledged the
// log in this generation (the local end when there is none): a compaction
// that keeps every record at or above it never leaves holes in what a
// follower is still sent.
func (l *Leader) CompactBelow() int64 {
	low := l.cfg.Log.End()
	l.fmu.Lock()
	defer l.fmu.Unlock()
	for _, f := range l.followers {
		low = min(low, f.matched)
	}
	return low
}

// live reports whether the leadership is neither closed nor deposed.
func (l *Leader) live() bool {
	select {
	case <-l.done:
		return false
	default:
		return !l.deposed.Load()
	}
}

func (l *Leader) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Commit is the commit watermark: one past the last acknowledgeable
// record. Readers see up to it.
func (l *Leader) Commit() int64 { return l.commit.Load() }

// Started reports whether the generation's start record has committed.
// Until it has, Commit may lie below records the predecessor acknowledged
// (it is what this replica learnt as a follower), so what reads the end
// (a subscription's latest start or end, a describe's figures) must wait.
// An External leadership at the Leader level writes no start record: it
// has started at once.
func (l *Leader) Started() bool {
	if l.cfg.External && l.cfg.Consistency == ConsistencyLeader {
		return true
	}
	return l.commit.Load() >= l.genStartNext.Load()
}

// End is Commit: the engine's log interface.
func (l *Leader) End() int64 { return l.commit.Load() }

// Start is the local log's start.
func (l *Leader) Start() int64 { return l.cfg.Log.Start() }

// Read reads the local log up to the commit watermark.
func (l *Leader) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	return readBelow(l.cfg.Log, from, l.commit.Load(), maxBytes, dst)
}

// Close stops the leadership: pending appends are told ErrLeaderClosed.
// It does not close the local log.
func (l *Leader) Close() error {
	select {
	case <-l.done:
		return nil
	default:
	}
	close(l.done)
	l.wg.Wait()
	l.failAll(ErrLeaderClosed)
	return nil
}

// Depose stops acknowledging: a newer generation fenced this replica.
// Pending appends are told ErrUnvouched.
func (l *Leader) Depose() {
	l.deposed.Store(true)
	l.cfg.Lease.Revoke(uint64(l.gen))
	l.signal()
}

func (l *Leader) run() {
	defer l.wg.Done()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-l.wake:
		case <-t.C:
		}
		l.ship()
		l.settle()
		l.deliver()
	}
}

// settle moves the commit watermark and acknowledges (or refuses) the
// appends at the head of the queue. It runs wherever progress is made, so
// an acknowledgement leaves without a hand-off to another goroutine: on
// the local log's committer (Committed), on the transport goroutine of a
// follower's answer, on the appender's goroutine, and on the leader's own
// goroutine at each tick (timeouts, a lease renewed). One at a time, so
// acknowledgements leave in offset order.
func (l *Leader) settle() {
	l.ackMu.Lock()
	defer l.ackMu.Unlock()
	if l.deposed.Load() {
		l.failAll(ErrUnvouched)
		return
	}
	if wm := l.watermark(); wm > l.commit.Load() {
		l.commit.Store(wm)
	}
	l.acknowledge(time.Now())
}

// watermark is where the commit may move now: the quorum watermark (or
// the local end), once it covers the generation's start record.
func (l *Leader) watermark() int64 {
	local := l.cfg.Log.End()
	wm := local
	if l.cfg.Consistency == ConsistencyQuorum {
		var room [8]int64
		ends := append(room[:0], local)
		l.fmu.Lock()
		for _, f := range l.followers {
			ends = append(ends, min(f.matched, local))
		}
		l.fmu.Unlock()
		wm = Watermark(ends)
	}
	if wm < l.genStartNext.Load() {
		return l.commit.Load()
	}
	return wm
}

// deliver hands OnCommit the records the commit watermark passed since it
// last ran, in chunks: on the leader's goroutine, never on an
// acknowledgement's path.
func (l *Leader) deliver() {
	if l.cfg.OnCommit == nil {
		l.delivered = l.commit.Load()
		return
	}
	for commit := l.commit.Load(); l.delivered < commit; {
		from := l.delivered
		out, next, err := readBelow(l.cfg.Log, from, commit, l.cfg.BatchBytes, l.deliverBuf[:0])
		l.deliverBuf = out[:0]
		if err != nil || next <= from {
			next = commit // nothing readable (retention, a gap compaction left): move on
		} else if l.cfg.OnCommit != nil {
			l.cfg.OnCommit(from, next, out)
		}
		l.delivered = next
	}
}

// replicatedFlush is what acknowledge's Flushers are told: the appends
// waited a round trip or a disk, on no log's committer.
var replicatedFlush = shardlog.FlushInfo{Synced: true, Replicated: true}

// acknowledge tells the head of the queue: committed appends while the
// lease holds, failed ones, and those past their deadline. A committed
// append waits for a lease not granted or renewed yet until its deadline:
// what matters is that the lease holds when the ack is sent.
//
// The acknowledgements told in one call share l.acks: a waiter that
// answers over a connection defers its write to the batch's end, so the
// appends one follower's answer committed leave in one write per
// connection, not one each.
func (l *Leader) acknowledge(now time.Time) {
	defer l.acks.Flush(replicatedFlush)
	commit := l.commit.Load()
	leased, window := l.cfg.Lease.validWindow(now, uint64(l.gen)) // the window: for OnAck, read with the check
	for {
		l.pmu.Lock()
		if len(l.queue) == 0 {
			l.pmu.Unlock()
			return
		}
		p := l.queue[0]
		var err error
		switch {
		case p.last < commit && leased:
		case p.last < commit && !now.Before(p.deadline):
			err = ErrUnvouched // no lease came in time: a new leader may have been named
		case p.last < commit:
			l.pmu.Unlock()
			return // a lease not granted yet (a new leadership) or not renewed yet
		case l.failed != nil:
			err = l.failed
		case !now.Before(p.deadline) && l.cfg.Consistency == ConsistencyQuorum:
			err = ErrNoQuorum
		default:
			l.pmu.Unlock()
			return
		}
		l.queue[0] = pendingAck{}
		l.queue = l.queue[1:]
		if len(l.queue) == 0 {
			l.queue = l.queueRoom[:0] // nothing pending: start again at the front of the array
		}
		l.pmu.Unlock()
		switch {
		case p.w == nil:
		case err == nil:
			if l.cfg.OnAck != nil {
				l.reportAck(p, now, window)
			}
			l.acks.Tell(p.w, p.first, p.last)
		default:
			l.acks.Flush(replicatedFlush) // what was acknowledged before it leaves first
			p.w.Committed(p.first, p.last, err)
		}
	}
}

// failAll refuses every pending append with err.
func (l *Leader) failAll(err error) {
	l.pmu.Lock()
	q := l.queue
	l.queue = nil
	l.pmu.Unlock()
	for _, p := range q {
		if p.w != nil {
			p.w.Committed(p.first, p.last, err)
		}
	}
}
