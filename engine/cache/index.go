package cache

import (
	"bytes"
	"math/rand/v2"

	"github.com/zeebo/xxh3"
)

// index maps each live key of a shard to the offset of the record holding
// its value. It stores no key: the main table is keyed by the key's 64-bit
// xxh3 hash and each entry carries a second hash of the key (the check),
// so a writer tells its own key's entry from another key's sharing the
// first hash without reading the record. The second key of such a pair
// (and any after it) lives in the collision table, keyed by the whole key;
// it is almost always empty.
//
// A main entry whose check matches is taken to be the key's: two keys
// would have to share 64 + 31 bits of hash (see fingerprint) for that to
// be wrong. Reads confirm it by the key in the record anyway, and a writer
// that reads the record (an entry with an expiry) confirms it too.
//
// Invariant: a key is in collide only while main holds its hash for
// another key. An entry says whether its value has an expiry; the expiry
// itself is in the record.
//
// Not safe for concurrent use: the shard guards it (writers hold writeMu
// and take ixMu to change it; readers take ixMu shared).
type index struct {
	seed    uint64 // the check's seed, drawn when the index is made
	main    map[hashKey]entry
	collide map[string]collision
}

// fingerprint is what the index knows of a key: h, its xxh3 hash (the
// same hash that picks the key's shard), and check, 31 bits of the key's
// xxh3 hash seeded with the index's seed, a function independent of the
// first. Two distinct keys of a shard of n keys share a fingerprint with
// probability about n^2 / 2^96 in all (about 1.3e-17 at a million keys,
// 1.3e-13 at a hundred million); the seed is drawn afresh each time a shard
// opens, so no fixed pair of keys can be made to collide on every run.
type fingerprint struct {
	h     uint64
	check uint32 // bit 0 always clear (it is the entry's expiry flag)
}

// hashKey is h split in two, so a main slot (key and entry) takes 20 bytes
// rather than the 24 an 8-byte-aligned key would round it up to.
type hashKey [2]uint32

func (fp fingerprint) key() hashKey { return hashKey{uint32(fp.h), uint32(fp.h >> 32)} }

// entry is a main table entry: the offset, and the check with its lowest
// bit saying whether the value has an expiry.
type entry struct {
	offLo, offHi uint32
	tag          uint32
}

const tagExpires = 1

func newEntry(off int64, check uint32, expires bool) entry {
	e := entry{offLo: uint32(off), offHi: uint32(uint64(off) >> 32), tag: check}
	if expires {
		e.tag |= tagExpires
	}
	return e
}

func (e entry) off() int64           { return int64(uint64(e.offHi)<<32 | uint64(e.offLo)) }
func (e entry) expires() bool        { return e.tag&tagExpires != 0 }
func (e entry) is(check uint32) bool { return e.tag&^tagExpires == check }

// collision is a colliding key's entry, with its fingerprint (the one its
// main entry's hash is shared with) for when it moves into main.
type collision struct {
	fp      fingerprint
	off     int64
	expires bool
}

// slot says which table holds, or will hold, a key's entry.
type slot uint8

const (
	slotMain slot = iota
	slotCollide
)

func newIndex() index { return index{seed: rand.Uint64(), main: map[hashKey]entry{}} }

func keyHash(key []byte) uint64 { return xxh3.Hash(key) }

// fingerprint returns the key's fingerprint; h is keyHash(key).
func (ix *index) fingerprint(h uint64, key []byte) fingerprint {
	return fingerprint{h: h, check: uint32(xxh3.HashSeed(key, ix.seed)) &^ tagExpires}
}

// len is the number of entries.
func (ix *index) len() int { return len(ix.main) + len(ix.collide) }

// found is what the index says of a key.
type found struct {
	ok      bool // an entry names the key's value
	off     int64
	expires bool // the value has an expiry (in its record)
	exact   bool // the entry is in the collision table, found by the whole key
	slot    slot // the table the entry is in, or a new entry goes to
}

// lookup finds the key's entry. An entry from the collision table is the
// key's for certain; one from the main table is the key's when its check
// matches (a read confirms it by the record's key). A main entry with
// another check belongs to another key: the key has none, and a new entry
// for it goes to the collision table.
func (ix *index) lookup(fp fingerprint, key []byte) found {
	if c, ok := ix.collided(key); ok {
		return found{ok: true, off: c.off, expires: c.expires, exact: true, slot: slotCollide}
	}
	e, ok := ix.main[fp.key()]
	switch {
	case !ok:
		return found{slot: slotMain}
	case !e.is(fp.check):
		return found{slot: slotCollide}
	}
	return found{ok: true, off: e.off(), expires: e.expires(), slot: slotMain}
}

// collided returns the key's entry when the key is in the collision table.
func (ix *index) collided(key []byte) (collision, bool) {
	if len(ix.collide) == 0 {
		return collision{}, false
	}
	c, ok := ix.collide[string(key)]
	return c, ok
}

// names reports whether the index names off as the value of key, the key
// of the record at off.
func (ix *index) names(fp fingerprint, key []byte, off int64) bool {
	if e, ok := ix.main[fp.key()]; ok && e.off() == off {
		return true
	}
	c, ok := ix.collided(key)
	return ok && c.off == off
}

// set records off as key's entry in the table s.
func (ix *index) set(fp fingerprint, key []byte, s slot, off int64, expires bool) {
	if s == slotMain {
		ix.main[fp.key()] = newEntry(off, fp.check, expires)
		return
	}
	if ix.collide == nil {
		ix.collide = map[string]collision{}
	}
	ix.collide[string(key)] = collision{fp: fp, off: off, expires: expires}
}

// remove drops key's entry from table s. When the main entry of a hash
// goes, a colliding key with that hash moves into its place.
func (ix *index) remove(fp fingerprint, key []byte, s slot) {
	if s == slotCollide {
		delete(ix.collide, string(key))
		return
	}
	delete(ix.main, fp.key())
	for k, c := range ix.collide {
		if c.fp.h == fp.h {
			delete(ix.collide, k)
			ix.main[fp.key()] = newEntry(c.off, c.fp.check, c.expires)
			return
		}
	}
}

// keyIs reports whether a record's key is key (the check that resolves a
// shared hash).
func keyIs(recordKey, key []byte) bool { return bytes.Equal(recordKey, key) }
