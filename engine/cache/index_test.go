package cache

import (
	"fmt"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// shardPut writes through one shard with a hash the test chooses, so keys
// can be made to share it.
func shardPut(t *testing.T, sh *shard, h uint64, key, value string) Written {
	t.Helper()
	s := syncWrites.Get().(*syncWrite)
	if err := sh.put(h, []byte(key), []byte(value), 0, Condition{}, s); err != nil {
		t.Fatal(err)
	}
	<-s.ch
	return s.res
}

func shardGet(t *testing.T, sh *shard, h uint64, key string) Item {
	t.Helper()
	it, err := sh.get(h, []byte(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// Keys sharing a 64-bit hash are told apart by the key in the record: each
// keeps its own value through overwrites, deletes and a rebuild.
func TestKeysSharingAHashAreToldApart(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true})
	defer c.store.Close()
	const h = 42
	sh := c.shards[0]
	for round := range 3 {
		for _, k := range []string{"a", "b", "c"} {
			shardPut(t, sh, h, k, fmt.Sprintf("%s%d", k, round))
		}
	}
	check := func(sh *shard, want map[string]string) {
		t.Helper()
		for _, k := range []string{"a", "b", "c", "d"} {
			it := shardGet(t, sh, h, k)
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
	if err := sh.del(h, []byte("a"), Condition{}, s1); err != nil {
		t.Fatal(err)
	}
	<-s1.ch
	check(sh, map[string]string{"b": "b2", "c": "c2"})
	if len(sh.ix.collide) != 1 {
		t.Fatalf("after deleting the main key %d colliding", len(sh.ix.collide))
	}
	shardPut(t, sh, h, "a", "a3")
	check(sh, map[string]string{"a": "a3", "b": "b2", "c": "c2"})
	// Compaction keeps each key's own value.
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	check(sh, map[string]string{"a": "a3", "b": "b2", "c": "c2"})
}

// The index's own rules for shared hashes: a colliding key is certain, a
// main entry is a candidate, and removing the main key promotes one.
func TestTheIndexPromotesCollidingKeys(t *testing.T) {
	ix := newIndex()
	ix.set(7, []byte("x"), slotMain, 1)
	ix.set(7, []byte("y"), slotCollide, 2)
	ix.set(7, []byte("z"), slotCollide, 3)
	if off, certain, ok := ix.candidate(7, []byte("y")); !ok || !certain || off != 2 {
		t.Fatalf("colliding key: %d %v %v", off, certain, ok)
	}
	if off, certain, ok := ix.candidate(7, []byte("x")); !ok || certain || off != 1 {
		t.Fatalf("main key: %d %v %v", off, certain, ok)
	}
	if !ix.names(7, []byte("z"), 3) || ix.names(7, []byte("q"), 9) {
		t.Fatal("names")
	}
	ix.remove(7, []byte("x"), slotMain)
	if ix.len() != 2 || len(ix.collide) != 1 {
		t.Fatalf("after removing the main key: %d entries, %d colliding", ix.len(), len(ix.collide))
	}
	promoted, ok := ix.main[7]
	if !ok || (promoted != 2 && promoted != 3) {
		t.Fatalf("promoted %d (%v)", promoted, ok)
	}
}
