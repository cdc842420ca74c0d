package cache

import "sync"

// Item answers a get. A key with no live value (never written, deleted or
// expired) is the zero Item.
type Item struct {
	Found     bool
	Offset    int64 // the log offset of the write that produced the value
	ExpiresAt int64 // unix ns; 0 when the value does not expire
	Value     []byte
}

// readBuf is scratch for one read: records are read whole into it.
type readBuf struct{ b []byte }

const readBufBytes = 16 << 10

var readBufs = sync.Pool{New: func() any { return &readBuf{b: make([]byte, 0, readBufBytes)} }}

// readBufKeepMax: a buffer a large value grew past it is left to the
// collector rather than kept in the pool.
const readBufKeepMax = 1 << 20

func putReadBuf(b *readBuf) {
	if cap(b.b) > readBufKeepMax {
		b.b = make([]byte, 0, readBufBytes)
	}
	readBufs.Put(b)
}

// get looks the key up and reads its record, from the value cache or else
// from the log (then caching it), appending the value to dst. A read
// racing a write of the same key waits for that write's commit; a lookup
// that loses a race with a later write (its record superseded and
// compacted away meanwhile) looks again. A main entry is confirmed by the
// record's key, so a get never answers with another key's value. A
// replicated shard answers only while it leads, from start to answer
// (replicate.go).
func (sh *shard) get(fp fingerprint, key, dst []byte) (Item, error) {
	if sh.primary() == nil {
		return sh.getLocal(fp, key, dst)
	}
	led, err := sh.readable()
	if err != nil {
		return Item{}, err
	}
	it, err := sh.getLocal(fp, key, dst)
	if err == nil {
		err = sh.readLeads(led)
	}
	if err != nil {
		return Item{}, err
	}
	return it, nil
}

// readable is nil when a replicated shard may serve a read now, and the
// generation it began under.
func (sh *shard) readable() (uint32, error) {
	if err := sh.usable(); err != nil {
		return 0, err
	}
	if err := sh.serving(); err != nil {
		return 0, err
	}
	return sh.led.Load(), nil
}

// getAsync is get on a Quorum shard for a caller that must not wait: a
// read whose key's newest write is not committed yet is parked on rw
// (park.go) and reports wait, or with rw nil parks nothing and reports
// wait. Any other shard is get.
func (sh *shard) getAsync(fp fingerprint, key, dst []byte, rw *ReadWait) (_ Item, wait bool, _ error) {
	if !sh.quorum || sh.primary() == nil {
		it, err := sh.get(fp, key, dst)
		return it, false, err
	}
	led, err := sh.readable()
	if err != nil {
		return Item{}, false, err
	}
	for {
		it, pending, err := sh.getVisible(fp, key, dst)
		switch {
		case err != nil:
			return Item{}, false, err
		case pending < 0:
			if err := sh.readLeads(led); err != nil {
				return Item{}, false, err
			}
			return it, false, nil
		case rw == nil:
			return Item{}, true, nil
		}
		if parked, err := sh.park(rw, pending, led); err != nil || parked {
			return Item{}, parked, err
		}
	}
}

// getLocal is get from this broker's index and log as they are, waiting
// for a write of the key not yet visible.
func (sh *shard) getLocal(fp fingerprint, key, dst []byte) (Item, error) {
	for {
		it, pending, err := sh.getVisible(fp, key, dst)
		if err != nil || pending < 0 {
			return it, err
		}
		if err := sh.waitVisible(pending); err != nil {
			return Item{}, err
		}
	}
}

// getVisible is getLocal without the wait: when the key's newest write is
// not visible yet it answers nothing and returns its offset as pending
// (-1 otherwise).
func (sh *shard) getVisible(fp fingerprint, key, dst []byte) (_ Item, pending int64, _ error) {
	buf := readBufs.Get().(*readBuf)
	defer putReadBuf(buf)
	for {
		if err := sh.usable(); err != nil {
			return Item{}, -1, err
		}
		sh.ixMu.RLock()
		f := sh.ix.lookup(fp, key)
		deleted := int64(-1)
		if !f.ok {
			deleted = sh.deletePendingLocked(fp)
		}
		sh.ixMu.RUnlock()
		if !f.ok {
			return Item{}, deleted, nil // a delete not visible yet: wait for it (quorum.go)
		}
		if f.off >= sh.visible() {
			return Item{}, f.off, nil
		}
		no := sh.valueNo.Load()
		if c, out := sh.values.lookup(no, f.off, key, dst, true); c.ok {
			return cachedItem(f.off, c, out, sh.c.nowNanos()), -1, nil
		}
		r, out, present, err := sh.readRecord(f.off, buf.b[:0])
		buf.b = out[:0]
		if err != nil {
			return Item{}, -1, sh.refused(err) // a stopping shard says why
		}
		if !present {
			if sh.stillNames(fp, key, f.off) {
				return Item{}, -1, nil // expired, and compaction removed it
			}
			continue
		}
		if !f.exact && !keyIs(r.Key, key) {
			return Item{}, -1, nil // the fingerprint belongs to another key
		}
		value, exp, err := valueOf(&r)
		if err != nil {
			return Item{}, -1, err
		}
		if expired(exp, sh.c.nowNanos()) {
			return Item{}, -1, nil
		}
		sh.values.insert(no, f.off, r.Key, exp, value)
		return Item{Found: true, Offset: f.off, ExpiresAt: exp, Value: append(dst, value...)}, -1, nil
	}
}

// cachedItem answers a get from the value cache's copy of the record at
// off, whose value (when it is the key's) was appended to out.
func cachedItem(off int64, c cached, out []byte, now int64) Item {
	if !c.sameKey || expired(c.expiresAt, now) {
		return Item{}
	}
	return Item{Found: true, Offset: off, ExpiresAt: c.expiresAt, Value: out}
}

func (sh *shard) stillNames(fp fingerprint, key []byte, off int64) bool {
	sh.ixMu.RLock()
	defer sh.ixMu.RUnlock()
	return sh.ix.names(fp, key, off)
}
