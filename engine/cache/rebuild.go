package cache

import (
	"fmt"

	"github.com/felixbroker/felix/segment"
)

// rebuildReadBytes is how much of the log the rebuild reads at a time.
const rebuildReadBytes = 4 << 20

// rebuild replays the shard's log into its index at open: a put names its
// offset, a delete or an expired put removes the key. Called before the
// shard serves anything.
func (sh *shard) rebuild() (records int64, err error) {
	now := sh.c.nowNanos()
	end := sh.log().End()
	buf := make([]byte, 0, rebuildReadBytes+readBufBytes)
	for from := sh.log().Start(); from < end; {
		out, next, err := sh.logs.Read(from, rebuildReadBytes, buf[:0])
		if err != nil {
			return records, err
		}
		it := segment.NewIter(out)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if err := sh.replay(&r, now); err != nil {
				return records, err
			}
			records++
		}
		if it.Err() != nil {
			return records, fmt.Errorf("felix/cache: rebuilding from offset %d: %w", from, it.Err())
		}
		buf, from = out, next
	}
	sh.appended = end
	return records, nil
}

// replay applies one record of the log to the index.
func (sh *shard) replay(r *segment.Record, now int64) error {
	if isControl(r) {
		return nil
	}
	fp := sh.ix.fingerprint(keyHash(r.Key), r.Key)
	st, err := sh.current(fp, r.Key, now, preRead{})
	if err != nil {
		return err
	}
	_, exp, err := valueOf(r)
	if err != nil {
		return err
	}
	if isDelete(r) || expired(exp, now) {
		if st.entry {
			sh.ix.remove(fp, r.Key, st.slot)
			if isDelete(r) {
				sh.noteDeletingLocked(fp, r.Offset)
			}
		}
		return nil
	}
	if exp != 0 {
		sh.expiries.Store(true)
	}
	sh.ix.set(fp, r.Key, st.slot, r.Offset, exp != 0)
	return nil
}
