package cache

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// sharedHash is the fingerprint key gets on sh when its hash is forced to
// h, so keys can be made to share it (with their own checks).
func sharedHash(sh *shard, h uint64, key string) fingerprint {
	return sh.ix.fingerprint(h, []byte(key))
}

// shardPut writes through one shard with a fingerprint the test chooses.
func shardPut(t *testing.T, sh *shard, fp fingerprint, key, value string, expiresAt int64) Written {
	t.Helper()
	s := syncWrites.Get().(*syncWrite)
	if err := sh.put(fp, []byte(key), []byte(value), expiresAt, Condition{}, s, true); err != nil {
		t.Fatal(err)
	}
	<-s.ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.res
}

func shardGet(t *testing.T, sh *shard, fp fingerprint, key string) Item {
	t.Helper()
	it, err := sh.get(fp, []byte(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// Keys sharing a 64-bit hash are told apart by their checks: each keeps
// its own value through overwrites, deletes, compaction and a rebuild.
func TestKeysSharingAHashAreToldApart(t *testing.T) {
	fs := vfs.NewMem()
	s, c := newCache(t, fs, nil, Config{Durable: true})
	const h = 42
	sh := c.held(0)
	for round := range 3 {
		for _, k := range []string{"a", "b", "c"} {
			w := shardPut(t, sh, sharedHash(sh, h, k), k, fmt.Sprintf("%s%d", k, round), 0)
			if w.Existed != (round > 0) {
				t.Fatalf("round %d key %s: existed %v", round, k, w.Existed)
			}
		}
	}
	check := func(sh *shard, want map[string]string) {
		t.Helper()
		for _, k := range []string{"a", "b", "c", "d"} {
			it := shardGet(t, sh, sharedHash(sh, h, k), k)
			if v, ok := want[k]; it.Found != ok || string(it.Value) != v {
				t.Fatalf("key %s: %+v (%q), want %q", k, it, it.Value, v)
			}
		}
	}
	check(sh, map[string]string{"a": "a2", "b": "b2", "c": "c2"})
	if sh.ix.len() != 3 || len(sh.ix.collide) != 2 {
		t.Fatalf("index: %d entries, %d colliding", sh.ix.len(), len(sh.ix.collide))
	}
	// Deleting the main entry's key promotes a colliding one.
	s1 := syncWrites.Get().(*syncWrite)
	if err := sh.del(sharedHash(sh, h, "a"), []byte("a"), Condition{}, s1, true); err != nil {
		t.Fatal(err)
	}
	<-s1.ch
	check(sh, map[string]string{"b": "b2", "c": "c2"})
	if len(sh.ix.collide) != 1 {
		t.Fatalf("after deleting the main key %d colliding", len(sh.ix.collide))
	}
	shardPut(t, sh, sharedHash(sh, h, "a"), "a", "a3", 0)
	check(sh, map[string]string{"a": "a3", "b": "b2", "c": "c2"})
	// Compaction keeps each key's own value.
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	check(sh, map[string]string{"a": "a3", "b": "b2", "c": "c2"})
	// A rebuild (with a new seed for the checks) sees the real hashes: each
	// key is found again under its own.
	_, c = reopen(t, s, fs, nil)
	defer c.store.Close()
	for k, v := range map[string]string{"a": "a3", "b": "b2", "c": "c2"} {
		wantValue(t, c, k, v, -1)
	}
}

// A put or delete over a value with no expiry reads nothing from the log:
// the entry's check says whose it is and the entry says it is live. One
// over a value with an expiry reads its record, for the expiry.
func TestAnOverwriteReadsARecordOnlyForAnExpiry(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem())
	_, c := newCache(t, efs, nil, Config{Durable: true})
	defer c.store.Close()
	put(t, c, "k", "v1", PutOptions{})
	put(t, c, "t", "v1", PutOptions{TTL: time.Hour})
	efs.Inject(errorfs.Rule{Op: errorfs.Read, PathContains: "values"})
	if w := put(t, c, "k", "v2", PutOptions{}); !w.Existed {
		t.Fatalf("overwrite: %+v", w)
	}
	if w := put(t, c, "k", "v3", PutOptions{Cond: Condition{Kind: CondIfOffset, Offset: 2}}); !w.Existed {
		t.Fatalf("conditional overwrite: %+v", w)
	}
	if _, err := c.Delete([]byte("k"), Condition{}); err != nil {
		t.Fatal(err)
	}
	if n := efs.Injected(); n != 0 {
		t.Fatalf("%d reads of the log", n)
	}
	if _, err := c.Put([]byte("t"), []byte("v2"), PutOptions{}); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("overwrite of a value with an expiry, its read failing: %v", err)
	}
}

// Two keys sharing the whole fingerprint, the case the check makes
// negligible: where the writer reads the record anyway (the value has an
// expiry) it still tells them apart by the record's key, and a get never
// answers one key with the other's value.
func TestAWholeFingerprintCollisionIsResolvedByTheRecord(t *testing.T) {
	clk := newClock()
	_, c := newCache(t, vfs.NewMem(), clk, Config{Durable: true})
	defer c.store.Close()
	sh := c.held(0)
	fp := fingerprint{h: 7, check: 8}
	exp := clk.Now().Add(time.Hour).UnixNano()
	shardPut(t, sh, fp, "x", "x1", exp)
	if it := shardGet(t, sh, fp, "y"); it.Found {
		t.Fatalf("y answered with %q", it.Value)
	}
	w := shardPut(t, sh, fp, "y", "y1", exp)
	if w.Existed || len(sh.ix.collide) != 1 {
		t.Fatalf("y over x: %+v, %d colliding", w, len(sh.ix.collide))
	}
	for k, v := range map[string]string{"x": "x1", "y": "y1"} {
		if it := shardGet(t, sh, fp, k); !it.Found || string(it.Value) != v {
			t.Fatalf("%s: %+v", k, it)
		}
	}
}

// The index's own rules for shared hashes: a colliding key is exact, a
// main entry is the key's when its check matches, another check means
// another key's, and removing the main key promotes a colliding one with
// its check and expiry flag.
func TestTheIndexPromotesCollidingKeys(t *testing.T) {
	ix := newIndex()
	fx, fy, fz := fingerprint{h: 7, check: 2}, fingerprint{h: 7, check: 4}, fingerprint{h: 7, check: 6}
	ix.set(fx, []byte("x"), slotMain, 1, false)
	ix.set(fy, []byte("y"), slotCollide, 2, true)
	ix.set(fz, []byte("z"), slotCollide, 3, false)
	if f := ix.lookup(fy, []byte("y")); !f.ok || !f.exact || f.off != 2 || !f.expires || f.slot != slotCollide {
		t.Fatalf("colliding key: %+v", f)
	}
	if f := ix.lookup(fx, []byte("x")); !f.ok || f.exact || f.off != 1 || f.expires || f.slot != slotMain {
		t.Fatalf("main key: %+v", f)
	}
	if f := ix.lookup(fingerprint{h: 7, check: 10}, []byte("w")); f.ok || f.slot != slotCollide {
		t.Fatalf("another key's hash: %+v", f)
	}
	if f := ix.lookup(fingerprint{h: 8, check: 10}, []byte("w")); f.ok || f.slot != slotMain {
		t.Fatalf("a free hash: %+v", f)
	}
	if !ix.names(fz, []byte("z"), 3) || ix.names(fingerprint{h: 9}, []byte("q"), 9) {
		t.Fatal("names")
	}
	ix.remove(fx, []byte("x"), slotMain)
	if ix.len() != 2 || len(ix.collide) != 1 {
		t.Fatalf("after removing the main key: %d entries, %d colliding", ix.len(), len(ix.collide))
	}
	promoted, ok := ix.main[fx.key()]
	switch {
	case !ok:
		t.Fatal("nothing promoted")
	case promoted.off() == 2 && (!promoted.is(fy.check) || !promoted.expires()):
		t.Fatalf("y promoted as %+v", promoted)
	case promoted.off() == 3 && (!promoted.is(fz.check) || promoted.expires()):
		t.Fatalf("z promoted as %+v", promoted)
	case promoted.off() != 2 && promoted.off() != 3:
		t.Fatalf("promoted offset %d", promoted.off())
	}
}

// An entry keeps offsets past 32 bits and its flag apart.
func TestAnEntryHoldsAWholeOffset(t *testing.T) {
	for _, off := range []int64{0, 1, 1<<32 - 1, 1 << 32, 1<<62 + 12345} {
		for _, exp := range []bool{false, true} {
			e := newEntry(off, 0xfffffffe, exp)
			if e.off() != off || e.expires() != exp || !e.is(0xfffffffe) || e.is(0xfffffffc) {
				t.Fatalf("entry(%d, %v): %+v", off, exp, e)
			}
		}
	}
}
