package cache

import (
	"bytes"

	"github.com/zeebo/xxh3"
)

// index maps each live key of a shard to the offset of the record holding
// its value. It stores no key: the main table is keyed by the key's 64-bit
// xxh3 hash, and two keys sharing a hash are told apart by reading the key
// of the record an entry names. The second key of such a pair (and any
// after it) lives in the collision table, keyed by the whole key; it is
// almost always empty.
//
// Invariant: a key is in collide only while main holds its hash for
// another key. Expiry is not kept here: it is in the record, which every
// access reads anyway.
//
// Not safe for concurrent use: the shard guards it (writers hold writeMu
// and take ixMu to change it; readers take ixMu shared).
type index struct {
	main    map[uint64]int64
	collide map[string]collision
}

// collision is a colliding key's entry, with the hash its main entry holds.
type collision struct {
	h   uint64
	off int64
}

// slot says which table holds, or will hold, a key's entry.
type slot uint8

const (
	slotMain slot = iota
	slotCollide
)

func newIndex() index { return index{main: map[uint64]int64{}} }

func keyHash(key []byte) uint64 { return xxh3.Hash(key) }

// len is the number of entries.
func (ix *index) len() int { return len(ix.main) + len(ix.collide) }

// collided returns the key's offset when the key is in the collision table.
func (ix *index) collided(key []byte) (int64, bool) {
	if len(ix.collide) == 0 {
		return 0, false
	}
	e, ok := ix.collide[string(key)]
	return e.off, ok
}

// candidate returns the offset the key's entry may hold: certain when it
// came from the collision table, otherwise to be confirmed by the key of
// the record it names.
func (ix *index) candidate(h uint64, key []byte) (off int64, certain, ok bool) {
	if off, ok := ix.collided(key); ok {
		return off, true, true
	}
	off, ok = ix.main[h]
	return off, false, ok
}

// names reports whether the index names off as key's value: the record at
// off, which has this key and hash, is live.
func (ix *index) names(h uint64, key []byte, off int64) bool {
	if o, ok := ix.main[h]; ok && o == off {
		return true
	}
	o, ok := ix.collided(key)
	return ok && o == off
}

// set records off as key's entry in the table s.
func (ix *index) set(h uint64, key []byte, s slot, off int64) {
	if s == slotMain {
		ix.main[h] = off
		return
	}
	if ix.collide == nil {
		ix.collide = map[string]collision{}
	}
	ix.collide[string(key)] = collision{h: h, off: off}
}

// remove drops key's entry from table s. When the main entry of a hash
// goes, a colliding key with that hash moves into its place.
func (ix *index) remove(h uint64, key []byte, s slot) {
	if s == slotCollide {
		delete(ix.collide, string(key))
		return
	}
	delete(ix.main, h)
	for k, e := range ix.collide {
		if e.h == h {
			delete(ix.collide, k)
			ix.main[h] = e.off
			return
		}
	}
}

// keyIs reports whether a record's key is key (the check that resolves a
// shared hash).
func keyIs(recordKey, key []byte) bool { return bytes.Equal(recordKey, key) }
