package cache

import (
	"errors"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// CompactStats sums what the compactions of one call did.
type CompactStats struct {
	Logs                    int // logs compacted (values and counters, per shard)
	Records, Kept           int64
	Expired                 int64 // expired values dropped
	BytesBefore, BytesAfter int64
}

func (s *CompactStats) add(st shardlog.CompactionStats) {
	s.Logs++
	s.Records += st.Records
	s.Kept += st.Kept
	s.BytesBefore += st.BytesBefore
	s.BytesAfter += st.BytesAfter
}

// Compact compacts the values and counters of every shard open here now,
// whatever their size; the background compactor does the same when a
// shard is due. A shard this broker holds no log of is skipped, as is one
// closed meanwhile because it no longer holds it.
func (c *Cache) Compact() (CompactStats, error) {
	var total CompactStats
	for i := range c.shards {
		sh := c.held(i)
		if sh == nil {
			continue
		}
		if err := sh.compact(&total); err != nil && !released(err) {
			return total, err
		}
	}
	return total, nil
}

// compact compacts the shard's values, then its counters, adding to total.
func (sh *shard) compact(total *CompactStats) error {
	st, expired, err := sh.compactValues()
	if err != nil {
		return err
	}
	if st.Segments > 0 {
		total.add(st)
		total.Expired += expired
	}
	if st, err = sh.counters.compact(); err != nil {
		return err
	}
	if st.Segments > 0 {
		total.add(st)
	}
	return nil
}

// expiredEntry is an index entry whose record compaction dropped as
// expired; the entry goes once the swap is done.
type expiredEntry struct {
	fp  fingerprint
	key []byte
	off int64
}

// compactValues rewrites the sealed segments of the shard's log keeping
// only the records the index names and that have not expired: superseded
// values, deletes (every older value of their key is dropped in the same
// pass, since compaction always starts at the log's first segment) and
// expired values go. Writes and reads go on meanwhile; the swap waits for
// readers that must see every record, and for the writer's lock, so every
// write the decisions relied on has been appended before the Commit syncs.
func (sh *shard) compactValues() (shardlog.CompactionStats, int64, error) {
	sh.compactRunning.Lock()
	defer sh.compactRunning.Unlock()
	sh.logs.Lock() // no reopen while the log is compacted
	defer sh.logs.Unlock()
	if err := sh.usable(); err != nil {
		return shardlog.CompactionStats{}, 0, err
	}
	led := sh.led.Load()
	floor, ok := compactFloor(sh.primary(), sh.leadsAt(led))
	if !ok {
		return shardlog.CompactionStats{}, 0, nil // a follower's log is compacted once it leads
	}
	now := sh.c.nowNanos()
	var gone []expiredEntry
	keep := func(r *segment.Record) bool {
		if isControl(r) {
			return true
		}
		if isDelete(r) {
			return false
		}
		fp := sh.ix.fingerprint(keyHash(r.Key), r.Key)
		if !sh.stillNames(fp, r.Key, r.Offset) {
			return false
		}
		if _, exp, err := valueOf(r); err == nil && expired(exp, now) {
			gone = append(gone, expiredEntry{fp: fp, key: append([]byte(nil), r.Key...), off: r.Offset})
			return false
		}
		return true
	}
	p, err := sh.log().PrepareCompaction(keepFrom(floor, keep))
	if errors.Is(err, shardlog.ErrNothingToCompact) {
		return shardlog.CompactionStats{}, 0, nil
	}
	if err != nil {
		return shardlog.CompactionStats{}, 0, err
	}
	sh.compactMu.Lock()
	sh.writeMu.Lock()
	//lint:ignore SA2001 a barrier: a write the index names is appended before its writer lets go
	sh.writeMu.Unlock()
	if !sh.leadsAt(led) { // the decisions were a leadership's that is over
		sh.compactMu.Unlock()
		p.Discard()
		return shardlog.CompactionStats{}, 0, nil
	}
	st, err := p.Commit()
	sh.compactMu.Unlock()
	if err != nil {
		return st, 0, err
	}
	sh.sweep(gone)
	sh.compactedBytes.Store(sh.log().Stats().Bytes)
	sh.compactions.Add(1)
	sh.expiredCompacted.Add(int64(len(gone)))
	return st, int64(len(gone)), nil
}

// sweep drops the index entries whose records compaction removed as
// expired, unless a write has named a new offset since.
func (sh *shard) sweep(gone []expiredEntry) {
	if len(gone) == 0 {
		return
	}
	sh.writeMu.Lock()
	defer sh.writeMu.Unlock()
	sh.ixMu.Lock()
	defer sh.ixMu.Unlock()
	for _, e := range gone {
		if c, ok := sh.ix.collided(e.key); ok && c.off == e.off {
			sh.ix.remove(e.fp, e.key, slotCollide)
		} else if m, ok := sh.ix.main[e.fp.key()]; ok && m.off() == e.off {
			sh.ix.remove(e.fp, e.key, slotMain)
		}
	}
}

// due reports whether the shard's values log has grown enough since its
// last compaction to compact it again.
func (sh *shard) due() bool {
	last, now := sh.compactedBytes.Load(), sh.log().Stats().Bytes
	grown := now - last
	return grown >= sh.c.store.opts.CompactMinBytes && grown >= last
}

// compactor is the store's background goroutine: every CompactEvery it
// compacts each shard that is due.
func (s *Store) compactor() {
	defer close(s.compactorDone)
	if s.opts.CompactEvery < 0 {
		<-s.stopCompactor
		return
	}
	t := time.NewTicker(s.opts.CompactEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stopCompactor:
			return
		case <-t.C:
			s.compactDue()
		}
	}
}

func (s *Store) compactDue() {
	s.mu.RLock()
	caches := make([]*Cache, 0, len(s.caches))
	for _, c := range s.caches {
		caches = append(caches, c)
	}
	s.mu.RUnlock()
	for _, c := range caches {
		for i := range c.shards {
			if sh := c.held(i); sh != nil {
				s.compactIfDue(c, sh)
			}
		}
	}
}

// compactIfDue compacts the shard's values and its counters, each if due.
// A shard that stopped meanwhile (closed, dropped, no longer held, failed)
// says so elsewhere; only the failures of a serving shard are logged.
func (s *Store) compactIfDue(c *Cache, sh *shard) {
	if sh.due() {
		if _, _, err := sh.compactValues(); err != nil && sh.usable() == nil {
			s.opts.Logger.Warn("cache compaction failed", "cache", c.info.ID.String(), "shard", sh.index, "err", err)
		}
	}
	if sh.counters.due() {
		if _, err := sh.counters.compact(); err != nil && sh.usable() == nil {
			s.opts.Logger.Warn("counter compaction failed", "cache", c.info.ID.String(), "shard", sh.index, "err", err)
		}
	}
}
