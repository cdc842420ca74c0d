package cache

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sync"
)

// valueCache keeps values in memory so that a get of a value read (or
// written over a value read) lately is answered without reading the log:
// a read-through cache shared by every shard of a store, bounded in bytes.
//
// An entry is keyed by (shard, offset) and holds that record's key, expiry
// and value. The record at an offset never changes, so an entry never goes
// stale: the index says which offset holds a key's live value, and an
// entry of an offset it no longer names is dead weight until evicted,
// never a wrong answer. A shard gets a new number each time it opens, so
// the entries of a closed shard are never found again.
//
// The entries live in stripes chosen by (shard, offset), each guarded by
// its own mutex: a ring of bytes written in order and overwritten oldest
// first, and a 4-way set-associative table of positions in it. Neither
// grows past its bound; a table slot pointing at an overwritten position
// is simply found stale. A slot carries 12 bits of its entry's hash beside
// the position, so a lookup reads from the ring (a cache miss, in a ring
// of megabytes) only the entry whose tag matches, not every entry of the
// set: a miss reads nothing from the ring in 4095 cases out of 4096.
// Nothing is allocated per operation: a stripe's ring and table are
// allocated when it first fills (doubling, from stripeRingFirstBytes, up
// to its share of the budget, moving what it held).
//
// Entry layout in a ring (starts 8-byte aligned; frozen only in memory):
//
//	 0 offset (i64; all ones: nothing more in this lap of the ring)
//	 8 expiry (i64 unix ns, 0: none) | 16 shard (u64) | 24 value length (u32)
//	28 key length (u16) | 30 key | value | padding to 8 bytes
//
// Table slot (u64): 0 is empty; else
//
//	bits 63..52 tag (bits 59..48 of the entry's spot hash)
//	bits 51..0  the entry's absolute ring position + 1
type valueCache struct {
	stripes [valueCacheStripes]stripe
}

const (
	valueCacheStripes = 16
	// stripeRingFirstBytes is a stripe's first ring; it doubles as it
	// fills, up to the stripe's share of the budget.
	stripeRingFirstBytes = 64 << 10
	// entryHeaderBytes is an entry's fixed part.
	entryHeaderBytes = 30
	// ringBytesPerSlot sizes a table to its ring: a slot (8 bytes) for
	// each 32 bytes of ring, so the table is a fifth of a stripe's bytes.
	ringBytesPerSlot = 32
	slotsPerSet      = 4
	// entryShareMax: an entry takes at most this fraction of a full ring,
	// so one large value cannot empty a stripe.
	entryShareMax = 8
	// padMark in an entry's offset field: nothing more in this lap of the
	// ring (no offset is negative).
	padMark = ^uint64(0)
	// A table slot's parts (see the layout above). A stripe whose absolute
	// positions near posLimit starts over empty, so a position always
	// fits its bits (at a gigabyte a second through one stripe, once in
	// thirteen days).
	slotTagShift = 52
	slotPosMask  = 1<<slotTagShift - 1
	posLimit     = 1 << 50
)

// ValueCacheStats are a store's value cache figures, for metrics.
type ValueCacheStats struct {
	Bytes   int64 // rings and tables allocated (at most Options.ValueCacheBytes)
	Hits    int64 // lookups (by gets, and by writers for an expiry) that found the record
	Misses  int64 // ... that did not
	Inserts int64 // records cached
	Grows   int64 // rings grown (each moving what it held)
}

// ValueCacheStats returns the value cache's figures (all zero when it is
// off).
func (s *Store) ValueCacheStats() ValueCacheStats { return s.values.stats() }

// stripe is one lock's share of the cache. See valueCache.
type stripe struct {
	mu      sync.Mutex
	ring    []byte
	table   []uint64 // position + 1 of an entry; 0: empty
	head    uint64   // absolute position of the oldest byte still held
	tail    uint64   // absolute position the next entry is written at
	ringMax int
	hits    int64
	misses  int64
	inserts int64
	grows   int64
	_       [64]byte // stripes are written by every loop: keep them apart
}

// newValueCache makes a cache of about budget bytes, or returns nil (no
// cache) when budget is too small to hold a stripe's first ring.
func newValueCache(budget int64) *valueCache {
	per := budget / valueCacheStripes * ringBytesPerSlot / (ringBytesPerSlot + 8) // the ring's part
	ringMax := int(per) &^ 7
	if ringMax < stripeRingFirstBytes {
		return nil
	}
	vc := &valueCache{}
	for i := range vc.stripes {
		vc.stripes[i].ringMax = ringMax
	}
	return vc
}

// spot hashes (shard, offset) to a stripe and a set in it.
func spot(shard uint64, off int64) (stripeIndex int, set uint64) {
	h := uint64(off)*0x9E3779B97F4A7C15 ^ shard*0xC2B2AE3D27D4EB4F
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 32
	return int(h >> 60), h
}

func entrySize(keyLen, valueLen int) int { return (entryHeaderBytes + keyLen + valueLen + 7) &^ 7 }

// cached is what a lookup found.
type cached struct {
	ok        bool // the cache holds the record at the offset
	sameKey   bool // ... and it is the key's
	expiresAt int64
}

// lookup finds the record at (shard, off) and, when it is key's and
// withValue is set, appends its value to dst.
func (vc *valueCache) lookup(shard uint64, off int64, key, dst []byte, withValue bool) (cached, []byte) {
	if vc == nil {
		return cached{}, dst
	}
	si, set := spot(shard, off)
	st := &vc.stripes[si]
	st.mu.Lock()
	defer st.mu.Unlock()
	at, ok := st.find(shard, off, set)
	if !ok {
		st.misses++
		return cached{}, dst
	}
	st.hits++
	e := st.ring[at:]
	keyLen, valueLen := int(binary.LittleEndian.Uint16(e[28:])), int(binary.LittleEndian.Uint32(e[24:]))
	c := cached{ok: true, expiresAt: int64(binary.LittleEndian.Uint64(e[8:]))}
	c.sameKey = bytes.Equal(e[entryHeaderBytes:entryHeaderBytes+keyLen], key)
	if c.sameKey && withValue {
		dst = append(dst, e[entryHeaderBytes+keyLen:entryHeaderBytes+keyLen+valueLen]...)
	}
	return c, dst
}

// holds reports whether the cache holds the record at (shard, off).
func (vc *valueCache) holds(shard uint64, off int64) bool {
	if vc == nil {
		return false
	}
	si, set := spot(shard, off)
	st := &vc.stripes[si]
	st.mu.Lock()
	defer st.mu.Unlock()
	_, ok := st.find(shard, off, set)
	return ok
}

// insert caches the record at (shard, off), unless it is already held or
// too large for its stripe.
func (vc *valueCache) insert(shard uint64, off int64, key []byte, expiresAt int64, value []byte) {
	if vc == nil {
		return
	}
	si, set := spot(shard, off)
	st := &vc.stripes[si]
	size := entrySize(len(key), len(value))
	if size > st.ringMax/entryShareMax {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.find(shard, off, set); ok {
		return
	}
	at := st.room(size)
	e := st.ring[at : at+size]
	binary.LittleEndian.PutUint64(e[0:], uint64(off))
	binary.LittleEndian.PutUint64(e[8:], uint64(expiresAt))
	binary.LittleEndian.PutUint64(e[16:], shard)
	binary.LittleEndian.PutUint32(e[24:], uint32(len(value)))
	binary.LittleEndian.PutUint16(e[28:], uint16(len(key)))
	n := copy(e[entryHeaderBytes:], key)
	copy(e[entryHeaderBytes+n:], value)
	st.remember(set, st.tail)
	st.tail += uint64(size)
	st.inserts++
}

// find returns the ring index of the entry of (shard, off). Mutex held.
func (st *stripe) find(shard uint64, off int64, set uint64) (int, bool) {
	if st.table == nil {
		return 0, false
	}
	first, tag := st.setStart(set), slotTag(set)
	for _, v := range st.table[first : first+slotsPerSet] {
		if v&^slotPosMask != tag || !st.live(v) {
			continue
		}
		at := int((v&slotPosMask - 1) % uint64(len(st.ring)))
		e := st.ring[at:]
		if int64(binary.LittleEndian.Uint64(e)) == off && binary.LittleEndian.Uint64(e[16:]) == shard {
			return at, true
		}
	}
	return 0, false
}

func (st *stripe) setStart(set uint64) int {
	return int(set&uint64(len(st.table)/slotsPerSet-1)) * slotsPerSet
}

// slotTag is the tag part of a slot for an entry whose spot hash is set:
// bits the set's index and the stripe's do not use.
func slotTag(set uint64) uint64 { return (set >> 48 & 0xfff) << slotTagShift }

// live reports whether slot v points at an entry still in the ring.
func (st *stripe) live(v uint64) bool { return v != 0 && v&slotPosMask-1 >= st.head }

// remember points a slot of the set at pos: an empty or stale one, else
// the one holding the oldest entry. Mutex held.
func (st *stripe) remember(set, pos uint64) {
	first := st.setStart(set)
	slots := st.table[first : first+slotsPerSet]
	victim := 0
	for i, v := range slots {
		if !st.live(v) {
			victim = i
			break
		}
		if v&slotPosMask < slots[victim]&slotPosMask {
			victim = i
		}
	}
	slots[victim] = slotTag(set) | (pos + 1)
}

// room makes size bytes free at the tail, in one piece, and returns their
// ring index: it grows the ring while it is under its bound, else evicts
// the oldest entries. The ring holds at least entryShareMax entries of
// size (see grow), so evicting everything always makes room. Mutex held.
func (st *stripe) room(size int) int {
	if st.ring == nil || (len(st.ring) < st.ringMax &&
		(st.tail+uint64(size)-st.head > uint64(len(st.ring)) || len(st.ring) < entryShareMax*size)) {
		st.grow(size)
	}
	if st.tail >= posLimit {
		st.restart()
	}
	capacity := uint64(len(st.ring))
	at := st.tail % capacity
	need := uint64(size)
	if at+need > capacity {
		need += capacity - at // the rest of this lap is skipped
	}
	for st.tail+need-st.head > capacity {
		st.evictOldest()
	}
	if at+uint64(size) > capacity {
		binary.LittleEndian.PutUint64(st.ring[at:], padMark)
		st.tail += capacity - at
		at = 0
	}
	return int(at)
}

// restart empties the stripe and starts its positions from 0 again, so
// they always fit a slot (see posLimit). Mutex held.
func (st *stripe) restart() {
	clear(st.table)
	st.head, st.tail = 0, 0
}

// evictOldest moves head past the oldest entry (or a lap's padding).
func (st *stripe) evictOldest() {
	capacity := uint64(len(st.ring))
	at := st.head % capacity
	e := st.ring[at:]
	if binary.LittleEndian.Uint64(e) == padMark {
		st.head += capacity - at
		return
	}
	st.head += uint64(entrySize(int(binary.LittleEndian.Uint16(e[28:])), int(binary.LittleEndian.Uint32(e[24:]))))
}

// grow doubles the ring (the first time, makes it), at least to
// entryShareMax entries of size, and moves what it held into it, oldest
// first. Then the ring holds at least entryShareMax entries of size: a
// ring at its bound does, since no larger entry is cached. Growing is
// the only allocation, and it stops once the ring reaches its bound.
func (st *stripe) grow(size int) {
	next := stripeRingFirstBytes
	if st.ring != nil {
		next = 2 * len(st.ring)
		st.grows++
	}
	for next < entryShareMax*size {
		next *= 2
	}
	next = min(next, st.ringMax)
	old, from, to := st.ring, st.head, st.tail
	st.ring = make([]byte, next)
	slots := 1 << (bits.Len(uint(next/ringBytesPerSlot)) - 1) // a power of two
	st.table = make([]uint64, max(slots, slotsPerSet))
	st.head, st.tail = 0, 0
	for p := from; p < to; { // what old held fits: next > len(old) >= to-from
		at := p % uint64(len(old))
		e := old[at:]
		if binary.LittleEndian.Uint64(e) == padMark {
			p += uint64(len(old)) - at
			continue
		}
		n := entrySize(int(binary.LittleEndian.Uint16(e[28:])), int(binary.LittleEndian.Uint32(e[24:])))
		copy(st.ring[st.tail:], e[:n])
		_, set := spot(binary.LittleEndian.Uint64(e[16:]), int64(binary.LittleEndian.Uint64(e)))
		st.remember(set, st.tail)
		st.tail += uint64(n)
		p += uint64(n)
	}
}

// stats sums the stripes' figures.
func (vc *valueCache) stats() ValueCacheStats {
	var s ValueCacheStats
	if vc == nil {
		return s
	}
	for i := range vc.stripes {
		st := &vc.stripes[i]
		st.mu.Lock()
		s.Bytes += int64(len(st.ring) + 8*len(st.table))
		s.Hits += st.hits
		s.Misses += st.misses
		s.Inserts += st.inserts
		s.Grows += st.grows
		st.mu.Unlock()
	}
	return s
}
