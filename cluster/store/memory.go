package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// historyRevisionsDefault is how many revisions of history the in-memory
// store keeps for watches when MemoryConfig says nothing; a watch further
// behind ends with ErrCompacted. The embedded etcd keeps as many.
const historyRevisionsDefault = 10_000

// MemoryConfig configures NewMemory.
type MemoryConfig struct {
	// Clock times leases; nil is SystemClock (a synctest bubble's fake
	// clock inside one).
	Clock Clock
	// HistoryRevisionsMax bounds the history kept for watches: at least
	// that many of the latest revisions are kept, and at most twice as
	// many; older ones are compacted away. 0 is historyRevisionsDefault.
	HistoryRevisionsMax int64
}

// Memory is the in-memory Store: etcd's semantics (revisions, leases,
// watches, elections) in one process, deterministic, with time from its
// Clock and no goroutine of its own. One mutex guards all its state.
type Memory struct {
	clock      Clock
	historyMax int64

	mu        sync.Mutex
	rev       int64 // the last revision written; 1 at the start, as etcd
	compacted int64 // history below this revision is gone
	keys      map[string]KV
	history   []Event // every event at a revision >= compacted, in order
	leases    map[LeaseID]*memLease
	leaseSeq  LeaseID
	changed   chan struct{} // closed and replaced at every new revision, and at Close
	closed    bool
}

// NewMemory makes an empty in-memory store at revision 1.
func NewMemory(cfg MemoryConfig) *Memory {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock()
	}
	if cfg.HistoryRevisionsMax <= 0 {
		cfg.HistoryRevisionsMax = historyRevisionsDefault
	}
	return &Memory{
		clock:      cfg.Clock,
		historyMax: cfg.HistoryRevisionsMax,
		rev:        1,
		keys:       make(map[string]KV),
		leases:     make(map[LeaseID]*memLease),
		changed:    make(chan struct{}),
	}
}

// Get implements Store.
func (s *Memory) Get(ctx context.Context, key string) (KV, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(ctx); err != nil {
		return KV{}, 0, err
	}
	return cloneKV(s.keys[key]), s.rev, nil
}

// Range implements Store.
func (s *Memory) Range(ctx context.Context, prefix string) ([]KV, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(ctx); err != nil {
		return nil, 0, err
	}
	keys := s.keysUnderLocked(prefix)
	kvs := make([]KV, len(keys))
	for i, k := range keys {
		kvs[i] = cloneKV(s.keys[k])
	}
	return kvs, s.rev, nil
}

// Txn implements Store.
func (s *Memory) Txn(ctx context.Context, txn Txn) (TxnResult, error) {
	if err := txn.validate(); err != nil {
		return TxnResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(ctx); err != nil {
		return TxnResult{}, err
	}
	for _, c := range txn.If {
		if !c.holds(s.keys[c.key]) {
			return TxnResult{Revision: s.rev}, nil
		}
	}
	if err := s.leasesExistLocked(txn.Then); err != nil {
		return TxnResult{}, err
	}
	s.applyLocked(txn.Then)
	return TxnResult{Succeeded: true, Revision: s.rev}, nil
}

// Compact implements Store.
func (s *Memory) Compact(ctx context.Context, rev int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(ctx); err != nil {
		return err
	}
	if rev <= s.compacted {
		return fmt.Errorf("%w: compact at %d, already compacted at %d", ErrCompacted, rev, s.compacted)
	}
	if rev > s.rev {
		return fmt.Errorf("%w: compact at %d, current revision %d", ErrFutureRevision, rev, s.rev)
	}
	s.compactLocked(rev)
	return nil
}

// Close implements Store: every waiting watch and campaign returns ErrClosed.
func (s *Memory) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for _, l := range s.leases {
		l.timer.Stop()
	}
	close(s.changed)
	return nil
}

// beginLocked starts every operation: a done ctx or a closed store ends it,
// and leases due by now expire first, so what it sees is the state at now.
func (s *Memory) beginLocked(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed {
		return ErrClosed
	}
	s.expireLocked()
	return nil
}

// applyLocked applies a txn's ops at the next revision; a txn that changes
// nothing (deletes of absent keys) makes no revision, as in etcd.
func (s *Memory) applyLocked(ops []Op) {
	rev := s.rev + 1
	n := len(s.history)
	for _, o := range ops {
		switch o.kind {
		case opPut:
			s.putLocked(o, rev)
		case opDelete:
			s.deleteLocked(o.key, rev)
		case opDeletePrefix:
			for _, k := range s.keysUnderLocked(o.key) {
				s.deleteLocked(k, rev)
			}
		}
	}
	if len(s.history) > n {
		s.commitLocked(rev)
	}
}

func (s *Memory) putLocked(o Op, rev int64) {
	kv, ok := s.keys[o.key]
	if !ok {
		kv = KV{Key: o.key, CreateRevision: rev}
	}
	s.detachLocked(kv)
	kv.Value = slices.Clone(o.value)
	kv.ModRevision, kv.Version, kv.Lease = rev, kv.Version+1, o.lease
	s.keys[o.key] = kv
	if l := s.leases[o.lease]; l != nil {
		l.keys[o.key] = struct{}{}
	}
	s.history = append(s.history, Event{Kind: EventPut, KV: kv})
}

func (s *Memory) deleteLocked(key string, rev int64) {
	kv, ok := s.keys[key]
	if !ok {
		return
	}
	s.detachLocked(kv)
	delete(s.keys, key)
	s.history = append(s.history, Event{Kind: EventDelete, KV: KV{Key: key, ModRevision: rev}})
}

// commitLocked makes rev the current revision, wakes the waiters and keeps
// the history within its bound: when it holds twice the bound, the older
// half goes (so the copy is paid once per historyMax revisions).
func (s *Memory) commitLocked(rev int64) {
	s.rev = rev
	close(s.changed)
	s.changed = make(chan struct{})
	if s.rev-s.compacted >= 2*s.historyMax {
		s.compactLocked(s.rev - s.historyMax + 1)
	}
}

func (s *Memory) compactLocked(rev int64) {
	i, _ := slices.BinarySearchFunc(s.history, rev, byRevision)
	s.history = slices.Delete(s.history, 0, i)
	s.compacted = rev
}

// keysUnderLocked lists the keys under prefix in order.
func (s *Memory) keysUnderLocked(prefix string) []string {
	var keys []string
	for k := range s.keys {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// byRevision orders an event against a revision, for binary searches of
// the history.
func byRevision(e Event, rev int64) int { return cmp.Compare(e.Revision(), rev) }

func cloneKV(kv KV) KV {
	kv.Value = slices.Clone(kv.Value)
	return kv
}
