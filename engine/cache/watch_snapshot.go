package cache

import (
	"fmt"
	"slices"

	"github.com/felixbroker/felix/segment"
)

// startSnapshot starts a watch from current state: a retained watch, or a
// resume from an offset compaction collapsed (resnapshot). Under the
// writer's lock it takes the cut (the next offset to be written) and
// registers the watch live from the cut on; then it gathers the matching
// keys' values as of the cut, each at the offset of the write that
// produced it. Every write below the cut is in the snapshot, every write
// from it on is delivered live: no gap, no duplicate. compactMu is held
// shared throughout, so no record the snapshot needs is compacted away
// before it is read.
func (sh *shard) startSnapshot(w *Watch, resnapshot bool) error {
	sh.compactMu.RLock()
	defer sh.compactMu.RUnlock()
	cut, keyOff, err := sh.cutAndRegister(w)
	if err != nil {
		return err
	}
	var snap []byte
	var n int
	if w.prefix {
		snap, n, err = sh.snapshotPrefix(w, cut)
	} else {
		snap, n, err = sh.snapshotKey(keyOff)
	}
	if err != nil {
		return err
	}
	w.snap.reset(snap)
	w.start = WatchStart{Shard: sh.index, Snapshot: n, Resnapshot: resnapshot, StartOffset: cut}
	return nil
}

// cutAndRegister takes the cut and registers the watch live from it; for a
// key watch it also reads the key's live offset at the cut (-1: none).
func (sh *shard) cutAndRegister(w *Watch) (cut, keyOff int64, err error) {
	sh.writeMu.Lock()
	defer sh.writeMu.Unlock()
	if err := sh.usable(); err != nil {
		return 0, 0, err
	}
	if err := sh.leadLocked(); err != nil {
		return 0, 0, err
	}
	keyOff = -1
	if !w.prefix {
		st, err := sh.current(sh.ix.fingerprint(keyHash(w.key), w.key), w.key, sh.c.nowNanos(), preRead{})
		if err != nil {
			return 0, 0, err
		}
		if st.found {
			keyOff = st.offset
		}
	}
	cut = sh.appended
	sh.watchMu.Lock()
	defer sh.watchMu.Unlock()
	if err := sh.registrable(); err != nil {
		return 0, 0, err
	}
	w.mu.Lock()
	w.next, w.live = cut, true
	w.mu.Unlock()
	sh.watches[w] = struct{}{}
	return cut, keyOff, nil
}

// snapshotKey returns the key's value at off, framed, unless it has expired.
func (sh *shard) snapshotKey(off int64) ([]byte, int, error) {
	if off < 0 {
		return nil, 0, nil
	}
	if err := sh.waitVisible(off); err != nil {
		return nil, 0, err
	}
	r, out, present, err := sh.readRecord(off, nil)
	if err != nil || !present {
		return nil, 0, err
	}
	if _, exp, err := valueOf(&r); err != nil || expired(exp, sh.c.nowNanos()) {
		return nil, 0, err
	}
	return out, 1, nil
}

// snapshotPrefix scans the log below the cut for the last write of each
// matching key, then reads the live values in offset order.
func (sh *shard) snapshotPrefix(w *Watch, cut int64) ([]byte, int, error) {
	if cut == 0 {
		return nil, 0, nil
	}
	if err := sh.waitVisible(cut - 1); err != nil {
		return nil, 0, err
	}
	latest := map[string]int64{}
	buf := make([]byte, 0, rebuildReadBytes+readBufBytes)
	for from := sh.log().Start(); from < cut; {
		out, next, err := sh.logs.Read(from, rebuildReadBytes, buf[:0])
		if err != nil {
			return nil, 0, err
		}
		it := segment.NewIter(out)
		for r, ok := it.Next(); ok && r.Offset < cut; r, ok = it.Next() {
			switch {
			case isControl(&r) || !w.matches(r.Key):
			case isDelete(&r):
				delete(latest, string(r.Key))
			default:
				latest[string(r.Key)] = r.Offset
			}
		}
		buf, from = out, next
	}
	offsets := make([]int64, 0, len(latest))
	for _, off := range latest {
		offsets = append(offsets, off)
	}
	slices.Sort(offsets)
	return sh.readSnapshot(offsets)
}

// readSnapshot reads the values at offsets, framed, skipping expired ones.
func (sh *shard) readSnapshot(offsets []int64) ([]byte, int, error) {
	var snap, buf []byte
	n, now, limit := 0, sh.c.nowNanos(), sh.c.store.opts.SnapshotBytesMax
	for _, off := range offsets {
		r, out, present, err := sh.readRecord(off, buf[:0])
		buf = out
		if err != nil {
			return nil, 0, err
		}
		if !present {
			continue
		}
		if _, exp, err := valueOf(&r); err != nil || expired(exp, now) {
			continue
		}
		if len(snap)+r.Size() > limit {
			return nil, 0, fmt.Errorf("%w: more than %d bytes", ErrSnapshotTooLarge, limit)
		}
		snap = segment.AppendRecord(snap, &r)
		n++
	}
	return snap, n, nil
}
