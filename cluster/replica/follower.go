package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// Errors a caller can test with errors.Is.
var (
	// ErrStaleFence is a FENCE below the replica's generation, or carrying
	// an epoch below the highest it has seen: a control plane that is no
	// longer the active one, or a fence overtaken by a later one.
	ErrStaleFence = errors.New("felix/replica: fence below what this replica has promised")
	// ErrFollowerClosed is a Fence after Close.
	ErrFollowerClosed = errors.New("felix/replica: follower closed")
)

// DefaultCallTimeout bounds one GENERATION_END exchange with the leader.
const DefaultCallTimeout = 5 * time.Second

// FollowerConfig is what a Follower is made of.
type FollowerConfig struct {
	Ref wire.LogRef // the log followed (copied)
	Log Log
	// FS and Dir hold the fence file (FenceFileName); the log's own
	// directory serves.
	FS  vfs.FS
	Dir string
	// Transport asks the leader GENERATION_END.
	Transport peer.Transport
	// NewDisk: the broker's data directory was created at this start; the
	// fence answers say so, and do not count as a replica that had data.
	NewDisk bool
	// DiskID is the data directory's random id, told in fence answers.
	DiskID string
	// BootID is this boot of the machine (BootID()): a replica opened
	// under another boot than it last ran under, with no clean stop since,
	// may have lost what it never fsynced, and its fence answers say it
	// is not clean (stop.go).
	BootID string
	// CallTimeout bounds a GENERATION_END (default DefaultCallTimeout).
	CallTimeout time.Duration
	Logger      *slog.Logger
}

// Follower is one replica's side of a log's replication: it appends its
// leader's batches at the leader's offsets (Replicate), answers fences
// (Fence), and, when a new generation's leader appears, truncates what
// that leader does not hold before it appends anything (KIP-279,
// follower_truncate.go). Every method is safe for concurrent use.
//
// Safety, in the order Replicate checks it (CLUSTER.md "Replication"):
//   - F (FenceState.Generation) only rises, and is durable before anything
//     that depends on it is answered; a REPLICATE below F is Fenced and
//     never touches the log, and an append already queued for a
//     generation below the highest seen is answered Fenced, not Appended,
//     when it commits (so no FENCE_OK's log end misses an acknowledged
//     record);
//   - nothing is appended for the leader of F before the log is
//     synchronised with it (A == F), so the log stays a prefix of the
//     leader's;
//   - an overlap of a synchronised log is skipped, never truncated (those
//     records may count in the leader's quorum); a gap is refused.
//
// Goroutines: Replicate runs on the caller's (a transport goroutine);
// acknowledgements on the log's committer; a rising generation is
// persisted, and a synchronisation runs, on goroutines of the Follower's
// own, one of each at a time, stopped by Close.
//
// Lock order: mu, then the FenceStore's, then the log's. The committer
// (ackWaiter) takes only wmu: never mu, which Replicate holds while
// AppendAt waits for buffer room the committer frees.
type Follower struct {
	ref         wire.LogRef
	log         Log
	fences      *FenceStore
	tr          peer.Transport
	flags       uint8 // wire.FenceNewDisk
	diskID      []byte
	lostTail    bool   // opened after a reboot with no clean stop: what was not fsynced may be gone
	openedGen   uint64 // the fence generation the replica was opened at: it may have led up to it before
	callTimeout time.Duration
	logger      *slog.Logger

	mu         sync.Mutex
	pending    uint64 // a generation a REPLICATE raised F to, not yet durable (0: none)
	raisedBy   string // the broker whose REPLICATE raised it
	persisting bool
	syncing    bool
	syncGen    uint64             // the generation the running synchronisation is for
	syncStop   context.CancelFunc // ends it at its next step
	syncDone   chan struct{}      // closed when it has ended
	desynced   uint64             // a generation whose synchronisation a divergence undid (in memory only)
	next       int64              // the log's next offset, queued appends included: only this Follower appends
	lastGen    uint32             // the generation of the record at next-1
	heard      time.Time
	commitGen  uint64 // the generation of the leader whose commit was last noted
	closed     bool
	entries    []shardlog.Entry // Replicate's scratch
	runs       []run

	// seen is the highest generation fenced, accepted or being persisted:
	// an append below it is not acknowledged.
	seen   atomic.Uint64
	commit atomic.Int64

	wmu  sync.Mutex // guards free
	free *ackWaiter

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewFollower opens the replica's fence file and starts following. F is
// raised to the log's last generation if the file says less (a replica
// accepted every record it holds from a leader at least that recent).
func NewFollower(cfg FollowerConfig) (*Follower, error) {
	if cfg.Log == nil || cfg.FS == nil || cfg.Transport == nil {
		return nil, errors.New("felix/replica: a follower needs a log, a file system for its fence and a transport")
	}
	fences, err := OpenFenceStore(cfg.FS, cfg.Dir)
	if err != nil {
		return nil, err
	}
	lostTail, err := openStopState(cfg.FS, cfg.Dir, cfg.BootID)
	if err != nil {
		return nil, err
	}
	lastGen := cfg.Log.LastGeneration()
	st, err := fences.Update(func(s *FenceState) error {
		s.Generation = max(s.Generation, uint64(lastGen))
		return nil
	})
	if err != nil {
		return nil, err
	}
	f := &Follower{ref: copyRef(cfg.Ref), log: cfg.Log, fences: fences, tr: cfg.Transport, diskID: []byte(cfg.DiskID),
		callTimeout: cfg.CallTimeout, logger: cfg.Logger, next: nextOffset(cfg.Log), lastGen: lastGen}
	if cfg.NewDisk {
		f.flags = wire.FenceNewDisk
	}
	f.lostTail, f.openedGen = lostTail, st.Generation
	if f.callTimeout <= 0 {
		f.callTimeout = DefaultCallTimeout
	}
	if f.logger == nil {
		f.logger = slog.Default()
	}
	f.seen.Store(st.Generation)
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f, nil
}

func copyRef(r wire.LogRef) wire.LogRef {
	r.Tenant = append([]byte(nil), r.Tenant...)
	r.Namespace = append([]byte(nil), r.Namespace...)
	r.Name = append([]byte(nil), r.Name...)
	r.Part = append([]byte(nil), r.Part...)
	return r
}

// Generation is F, the highest generation durably fenced or accepted.
func (f *Follower) Generation() uint64 { return f.fences.State().Generation }

// Commit is the commit watermark the leader of F last sent, once this
// replica is synchronised with it, capped at the local log's End.
func (f *Follower) Commit() int64 { return min(f.commit.Load(), f.log.End()) }

// LeaderHeard is when the last REPLICATE of generation F arrived; ok is
// false before the first.
func (f *Follower) LeaderHeard() (at time.Time, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.heard, !f.heard.IsZero()
}

// Close stops the Follower's goroutines (a GENERATION_END in flight is
// abandoned) and waits for them. Later REPLICATEs are answered Unknown,
// later fences refused. Appends already queued are still answered when
// the log commits them. It closes neither the log nor the transport.
func (f *Follower) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.cancel()
	f.wg.Wait()
	return nil
}

// Replicate handles one decoded REPLICATE from broker `from`. It answers
// exactly once through answer, now or, when it appended, from the log's
// committer goroutine once the records are acknowledgeable at the log's
// FsyncMode, unless it returns an error (wrapping ErrMalformed): then it
// answered nothing, touched nothing, and the caller answers ERROR
// malformed. It never waits on a disk, only, like any append, for room in
// the log's write buffer. m is not kept: its records are copied into the
// log before Replicate returns. answer must not block.
func (f *Follower) Replicate(from string, m *wire.Replicate, answer func(wire.ReplicateAck)) error {
	gen := m.Generation
	if gen == 0 || gen > math.MaxUint32 || m.PrevGen > gen {
		return fmt.Errorf("%w: REPLICATE at generation %d after generation %d (a log's generations are 1 to %d)",
			ErrMalformed, gen, m.PrevGen, uint32(math.MaxUint32))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		answer(wire.ReplicateAck{Status: wire.ReplicateUnknown})
		return nil
	}
	st := f.fences.State()
	switch {
	case gen < st.Generation:
		answer(f.fencedAck(st.Generation))
		return nil
	case gen < f.pending:
		answer(f.fencedAck(f.pending))
		return nil
	case gen > st.Generation:
		f.raiseLocked(from, gen)
		answer(f.unsyncedAck(gen))
		return nil
	}
	f.heard = time.Now()
	if !f.syncedLocked(st) {
		f.startSyncLocked(from, gen)
		answer(f.unsyncedAck(gen))
		return nil
	}
	f.noteCommitLocked(gen, m.Commit)
	return f.appendLocked(from, m, answer)
}

// noteCommitLocked records the leader's commit watermark. The first one
// of a generation keeps of the last generation's only what the log still
// holds now, after its truncation: the new leader's records that will
// fill the offsets above are committed when it says so, not before. mu
// held.
func (f *Follower) noteCommitLocked(gen uint64, commit int64) {
	cur := f.commit.Load()
	if gen != f.commitGen {
		f.commitGen = gen
		cur = min(cur, f.log.End())
	}
	f.commit.Store(max(cur, commit))
}

// syncedLocked: the log is synchronised with the leader of F.
func (f *Follower) syncedLocked(st FenceState) bool {
	return st.Synced == st.Generation && !f.syncing && f.desynced != st.Generation
}

// fencedAck refuses a stale leader. Durable is 0: nothing here counts
// towards a generation below fence.
func (f *Follower) fencedAck(fence uint64) wire.ReplicateAck {
	return wire.ReplicateAck{Status: wire.ReplicateFenced, FenceGen: fence, LogEnd: f.log.End(), LastGen: uint64(f.log.LastGeneration())}
}

// unsyncedAck answers the leader of gen before this replica synchronised
// with it: its log end, to resend from once it has, and Durable 0, since
// what the log holds may not be the leader's.
func (f *Follower) unsyncedAck(gen uint64) wire.ReplicateAck {
	return wire.ReplicateAck{Status: wire.ReplicateMismatch, FenceGen: gen, LogEnd: f.log.End(), LastGen: uint64(f.log.LastGeneration())}
}

// mismatchAck tells a synchronised leader where the log continues (next,
// queued appends included) and what of it is acknowledgeable.
func (f *Follower) mismatchAck(gen uint64) wire.ReplicateAck {
	return wire.ReplicateAck{Status: wire.ReplicateMismatch, FenceGen: gen, LogEnd: f.next, LastGen: uint64(f.lastGen), Durable: f.log.End()}
}

// appendLocked is rule 4: the log is synchronised with the leader of F =
// m.Generation. mu held.
func (f *Follower) appendLocked(from string, m *wire.Replicate, answer func(wire.ReplicateAck)) error {
	entries, runs, err := appendEntries(f.entries[:0], f.runs[:0], m.Records, m.First)
	f.entries, f.runs = entries, runs
	if err != nil {
		return err
	}
	if len(runs) > 0 && (uint64(runs[0].gen) < m.PrevGen || uint64(runs[len(runs)-1].gen) > m.Generation) {
		return fmt.Errorf("%w: records of generations %d to %d in a REPLICATE at generation %d after generation %d",
			ErrMalformed, runs[0].gen, runs[len(runs)-1].gen, m.Generation, m.PrevGen)
	}
	first, prevGen := m.First, uint32(m.PrevGen)
	if first < f.next && len(entries) > 0 {
		// A resend, duplicate or reordered batch: skip what the log holds.
		// It is the leader's already, the log being a prefix of it.
		skip := f.next - first
		if skip >= int64(len(entries)) {
			answer(f.heldAck(m.Generation, first+int64(len(entries))))
			return nil
		}
		if g := genAt(runs, int(skip-1)); g != f.lastGen {
			f.divergedLocked(from, m.Generation)
			answer(f.unsyncedAck(m.Generation))
			return nil
		}
		runs = trimRuns(runs, int(skip))
		first, prevGen = f.next, f.lastGen
	}
	if len(entries) == 0 {
		answer(f.probeAck(m))
		return nil
	}
	for i, r := range runs {
		var w *ackWaiter
		if i == len(runs)-1 {
			w = f.waiter(answer, m.Generation, r.gen)
		}
		if err := f.log.AppendAt(first, prevGen, entries[r.start:r.end], r.gen, waiterOrNil(w)); err != nil {
			if w != nil {
				f.putWaiter(w)
			}
			f.refusedLocked(from, m.Generation, err, answer)
			return nil
		}
		first += int64(r.end - r.start)
		prevGen = r.gen
		f.next, f.lastGen = first, prevGen
	}
	return nil
}

// waiterOrNil keeps a nil *ackWaiter from becoming a non-nil Waiter.
func waiterOrNil(w *ackWaiter) shardlog.Waiter {
	if w == nil {
		return nil
	}
	return w
}

// genAt is the generation of the batch's i-th record.
func genAt(runs []run, i int) uint32 {
	for _, r := range runs {
		if i < r.end {
			return r.gen
		}
	}
	return runs[len(runs)-1].gen
}

// trimRuns drops the first skip entries' worth of runs.
func trimRuns(runs []run, skip int) []run {
	n := 0
	for n < len(runs) && runs[n].end <= skip {
		n++
	}
	runs = runs[n:]
	runs[0].start = max(runs[0].start, skip)
	return runs
}

// heldAck answers a batch the log already holds whole, up to end: Appended
// once all of it is acknowledgeable, else where the log continues (the
// original batch's own answer comes when it commits).
func (f *Follower) heldAck(gen uint64, end int64) wire.ReplicateAck {
	if visible := f.log.End(); end <= visible && f.next == visible {
		return wire.ReplicateAck{Status: wire.ReplicateAppended, FenceGen: gen, LogEnd: visible, LastGen: uint64(f.lastGen), Durable: visible}
	}
	return f.mismatchAck(gen)
}

// probeAck answers an empty REPLICATE (a probe, or a commit update):
// Appended when it continues the log exactly, with the acknowledgeable end.
func (f *Follower) probeAck(m *wire.Replicate) wire.ReplicateAck {
	visible := f.log.End()
	held := f.next > f.log.Start()
	match := m.First == f.next && (!held && (f.next > 0 || m.PrevGen == 0) || held && m.PrevGen == uint64(f.lastGen))
	if !match || visible != f.next {
		return f.mismatchAck(m.Generation)
	}
	return wire.ReplicateAck{Status: wire.ReplicateAppended, FenceGen: m.Generation, LogEnd: visible, LastGen: uint64(f.lastGen), Durable: visible}
}

// refusedLocked answers an AppendAt the log refused. A gap or an overlap
// is told where the log continues; a divergence of a log synchronised
// with this leader should not happen, and is taken as a log no longer
// synchronised: the truncation runs again. mu held.
func (f *Follower) refusedLocked(from string, gen uint64, err error, answer func(wire.ReplicateAck)) {
	var de *shardlog.DivergenceError
	switch {
	case errors.As(err, &de):
		f.next, f.lastGen = de.Want, de.LastGen
		if de.Kind == shardlog.ErrGap || de.Kind == shardlog.ErrOverlap {
			answer(f.mismatchAck(gen))
			return
		}
		f.divergedLocked(from, gen)
		answer(f.unsyncedAck(gen))
	case errors.Is(err, shardlog.ErrClosed):
		answer(wire.ReplicateAck{Status: wire.ReplicateUnknown, FenceGen: gen})
	default:
		f.logger.Warn("replica append refused", "log", f.ref.String(), "generation", gen, "err", err)
		answer(f.mismatchAck(gen))
	}
}

// divergedLocked undoes the synchronisation with the leader of gen, in
// memory, and runs it again. mu held.
func (f *Follower) divergedLocked(from string, gen uint64) {
	f.logger.Warn("replica log diverged from its synchronised leader; truncating again", "log", f.ref.String(), "generation", gen)
	f.desynced = gen
	f.startSyncLocked(from, gen)
}

// raiseLocked is rule 2: a REPLICATE of generation gen above F. F rises
// to gen durably, on the persister goroutine; the synchronisation with
// from starts once it has. mu held.
func (f *Follower) raiseLocked(from string, gen uint64) {
	if gen > f.pending {
		f.pending, f.raisedBy = gen, from
	}
	f.raiseSeen(gen)
	if f.persisting || f.closed {
		return
	}
	f.persisting = true
	f.wg.Add(1)
	go f.persist()
}

// raiseSeen makes gen the floor of what is acknowledged.
func (f *Follower) raiseSeen(gen uint64) {
	for {
		cur := f.seen.Load()
		if gen <= cur || f.seen.CompareAndSwap(cur, gen) {
			return
		}
	}
}

// persist makes F the highest pending generation, durably, then starts
// the synchronisation with the broker that raised it.
func (f *Follower) persist() {
	defer f.wg.Done()
	for {
		f.mu.Lock()
		target, from := f.pending, f.raisedBy
		f.mu.Unlock()
		_, err := f.fences.Update(func(s *FenceState) error {
			s.Generation = max(s.Generation, target)
			return nil
		})
		f.mu.Lock()
		if err != nil {
			f.persisting = false // pending stays: lower generations are still refused; the next REPLICATE retries
			f.mu.Unlock()
			f.logger.Error("replica could not persist its generation", "log", f.ref.String(), "generation", target, "err", err)
			return
		}
		if f.pending > target {
			f.mu.Unlock()
			continue
		}
		f.pending, f.persisting = 0, false
		if !f.closed && f.fences.State().Generation == target {
			f.startSyncLocked(from, target)
		}
		f.mu.Unlock()
		return
	}
}

// Fence persists the fence at (gen, epoch) durably and returns the
// replica's real state. A generation below F, or an epoch below the
// highest seen, is refused with ErrStaleFence (the caller answers ERROR);
// the same fence again is answered again. Epoch 0 is no control plane's
// (one's epoch is its election revision, above 0): a broker fencing
// itself as it takes the leadership. It skips the epoch check and leaves
// the epoch as it is. Fence waits for the fence file's fsync: call it off
// the transport's goroutine. The FenceOK's DiskID is the Follower's: do
// not modify it.
func (f *Follower) Fence(gen uint64, epoch int64) (wire.FenceOK, error) {
	if gen == 0 || gen > math.MaxUint32 {
		return wire.FenceOK{}, fmt.Errorf("%w: fence at generation %d (a log's generations are 1 to %d)", ErrMalformed, gen, uint32(math.MaxUint32))
	}
	if f.ctx.Err() != nil {
		return wire.FenceOK{}, ErrFollowerClosed
	}
	_, err := f.fences.Update(func(s *FenceState) error {
		if gen < s.Generation || epoch != 0 && epoch < s.Epoch {
			return fmt.Errorf("%w: fence at generation %d epoch %d; this replica is at generation %d epoch %d",
				ErrStaleFence, gen, epoch, s.Generation, s.Epoch)
		}
		s.Generation = gen
		s.Epoch = max(s.Epoch, epoch)
		// Before the write: an append of a lower generation that commits
		// from now on is told Fenced, so none is acknowledged that the
		// log end below misses.
		f.raiseSeen(gen)
		return nil
	})
	if err != nil {
		return wire.FenceOK{}, err
	}
	f.stopSyncBelow(gen)
	end := f.log.End()
	ok := wire.FenceOK{Generation: gen, Epoch: epoch, LogEnd: end, LastGen: uint64(f.generationAtEnd(end)),
		Durable: min(f.log.Durable(), end), Flags: f.flags, DiskID: f.diskID}
	if r, has := f.log.(recoveryReporter); !f.lostTail && (!has || r.Recovery().TornBytes == 0) {
		ok.Flags |= wire.FenceClean
	}
	return ok, nil
}

// mayHaveLostLeadOf reports whether this replica may have led at gen
// before it was opened and lost records of that leadership its followers
// hold: its last stop may have lost its unsynced tail (or its recovery
// cut a torn one), and gen is at most the generation it was fenced at
// then. Leading at gen again would append at offsets where they hold
// other records of the same generation, which no truncation can tell
// apart (sim seed 307).
func (f *Follower) mayHaveLostLeadOf(gen uint64) bool {
	r, has := f.log.(recoveryReporter)
	unclean := f.lostTail || (has && r.Recovery().TornBytes > 0)
	return unclean && gen <= f.openedGen
}

// stopSyncBelow ends a synchronisation with a leader older than gen and
// waits for it: once a fence at gen is answered, nothing truncates the
// log for an older leader (this broker may lead at gen next, appending).
func (f *Follower) stopSyncBelow(gen uint64) {
	f.mu.Lock()
	var done chan struct{}
	if f.syncing && f.syncGen < gen {
		f.syncStop()
		done = f.syncDone
	}
	f.mu.Unlock()
	if done != nil {
		<-done
	}
}

// generationAtEnd is the generation of the record at end-1, end being an
// acknowledgeable end read before: the log's last generation may already
// be that of appends queued after it. When it cannot tell, it says 0,
// which only makes this replica less preferred for promotion.
func (f *Follower) generationAtEnd(end int64) uint32 {
	if end <= f.log.Start() {
		if nextOffset(f.log) == end {
			return f.log.LastGeneration()
		}
		return 0
	}
	var buf [256]byte
	out, _, err := f.log.Read(end-1, 1, buf[:0])
	if err != nil {
		return 0
	}
	if rec, ok := firstRecord(out); ok && rec.Offset == end-1 {
		return rec.Generation
	}
	return 0
}

// ackWaiter answers one appended batch when the log commits it. They are
// kept on a free list and reused: an append allocates none in steady
// state.
type ackWaiter struct {
	f       *Follower
	answer  func(wire.ReplicateAck)
	gen     uint64 // the REPLICATE's generation
	lastGen uint32 // the generation of the batch's last record
	next    *ackWaiter
}

// waiter takes an ackWaiter off the free list, or makes one.
func (f *Follower) waiter(answer func(wire.ReplicateAck), gen uint64, lastGen uint32) *ackWaiter {
	f.wmu.Lock()
	w := f.free
	if w != nil {
		f.free, w.next = w.next, nil
	}
	f.wmu.Unlock()
	if w == nil {
		w = &ackWaiter{f: f}
	}
	w.answer, w.gen, w.lastGen = answer, gen, lastGen
	return w
}

func (f *Follower) putWaiter(w *ackWaiter) {
	w.answer = nil
	f.wmu.Lock()
	w.next, f.free = f.free, w
	f.wmu.Unlock()
}

// Committed answers the batch [first, last] on the log's committer: it
// is acknowledgeable at the log's FsyncMode (under OnCommit, fsynced).
// LogEnd and LastGen are the batch's end and its last generation, a pair
// the log held together; Durable the same end. A generation fenced while
// it was queued turns Appended into Fenced. A failed append (the log is
// poisoned) is a mismatch at the acknowledgeable end.
func (w *ackWaiter) Committed(_, last int64, err error) {
	f, answer, gen, lastGen := w.f, w.answer, w.gen, w.lastGen
	f.putWaiter(w)
	if seen := f.seen.Load(); gen < seen {
		answer(f.fencedAck(seen))
		return
	}
	if err != nil {
		end := f.log.End()
		answer(wire.ReplicateAck{Status: wire.ReplicateMismatch, FenceGen: gen, LogEnd: end, LastGen: uint64(f.log.LastGeneration()), Durable: end})
		return
	}
	answer(wire.ReplicateAck{Status: wire.ReplicateAppended, FenceGen: gen, LogEnd: last + 1, LastGen: uint64(lastGen), Durable: last + 1})
}
