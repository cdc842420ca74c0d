package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// smallValueCache is a cache whose stripes' rings are bounded at rings
// times their first size, so a few hundred kilobytes wrap it; and its
// budget.
func smallValueCache(t *testing.T, rings int) (*valueCache, int64) {
	t.Helper()
	budget := int64(valueCacheStripes * rings * stripeRingFirstBytes * (ringBytesPerSlot + 8) / ringBytesPerSlot)
	vc := newValueCache(budget)
	if vc == nil || vc.stripes[0].ringMax != rings*stripeRingFirstBytes {
		t.Fatalf("ring bound %d", vc.stripes[0].ringMax)
	}
	return vc, budget
}

type cachedRecord struct {
	key, value []byte
	expiresAt  int64
}

// Whatever the cache answers is what was inserted for that shard and
// offset: through growth, wrapping, eviction and table conflicts, with
// entries of every size up to the bound. The entry just inserted is always
// found, and the rings and tables stay within the budget.
func TestTheValueCacheAnswersOnlyWhatWasInserted(t *testing.T) {
	vc, budget := smallValueCache(t, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	type id struct {
		shard uint64
		off   int64
	}
	model := map[id]cachedRecord{}
	found := 0
	for i := range 20_000 {
		at := id{shard: uint64(rng.IntN(3)), off: int64(rng.IntN(5000))}
		rec, ok := model[at]
		if !ok {
			rec = cachedRecord{key: fmt.Appendf(nil, "k%d/%d", at.shard, at.off),
				value: bytes.Repeat([]byte{byte(i)}, rng.IntN(4*stripeRingFirstBytes/entryShareMax-64)), expiresAt: int64(i)}
			model[at] = rec
		}
		vc.insert(at.shard, at.off, rec.key, rec.expiresAt, rec.value)
		if c, v := vc.lookup(at.shard, at.off, rec.key, nil, true); !c.ok || !c.sameKey || !bytes.Equal(v, rec.value) {
			t.Fatalf("insert %d: the entry just inserted is not found (%+v)", i, c)
		}
		probe := id{shard: uint64(rng.IntN(3)), off: int64(rng.IntN(5000))}
		want, known := model[probe]
		key := want.key
		if !known {
			key = []byte("never")
		}
		c, v := vc.lookup(probe.shard, probe.off, key, []byte("dst:"), true)
		switch {
		case c.ok && !known:
			t.Fatalf("lookup %d: found %v, never inserted", i, probe)
		case c.ok && (!c.sameKey || c.expiresAt != want.expiresAt || !bytes.Equal(v, append([]byte("dst:"), want.value...))):
			t.Fatalf("lookup %d of %v: %+v, %d value bytes; want %d", i, probe, c, len(v), len(want.value)+4)
		case c.ok:
			found++
		}
	}
	st := vc.stats()
	if st.Bytes > budget || st.Inserts == 0 || st.Grows == 0 || found == 0 {
		t.Fatalf("stats %+v (budget %d), %d probes found", st, budget, found)
	}
}

// Growing a stripe's ring keeps what it held: every entry inserted while
// the ring was smaller is still found once it has doubled twice.
func TestGrowingAValueCacheKeepsItsEntries(t *testing.T) {
	vc, _ := smallValueCache(t, 4)
	offs := offsetsInStripe(1, 150)
	value := make([]byte, 1000) // 150 entries: past one and two rings of 64 KiB, within four
	for _, off := range offs {
		vc.insert(1, off, fmt.Appendf(nil, "k%d", off), off, value)
	}
	if st := vc.stats(); st.Grows != 2 {
		t.Fatalf("stats %+v, want 2 grows", st)
	}
	for _, off := range offs {
		if c, v := vc.lookup(1, off, fmt.Appendf(nil, "k%d", off), nil, true); !c.ok || !c.sameKey || c.expiresAt != off || len(v) != len(value) {
			t.Fatalf("entry %d after growing: %+v, %d bytes", off, c, len(v))
		}
	}
}

// An entry found for the offset but holding another key (a shared
// fingerprint) says so and appends nothing.
func TestTheValueCacheTellsAnotherKeysRecord(t *testing.T) {
	vc, _ := smallValueCache(t, 1)
	vc.insert(1, 7, []byte("x"), 0, []byte("value of x"))
	c, v := vc.lookup(1, 7, []byte("y"), nil, true)
	if !c.ok || c.sameKey || len(v) != 0 {
		t.Fatalf("%+v, %q", c, v)
	}
}

// A stripe evicts its oldest entries first, and an entry over its share of
// a full ring is not cached at all.
func TestTheValueCacheEvictsTheOldestFirst(t *testing.T) {
	vc, _ := smallValueCache(t, 1)
	var offs []int64 // offsets that all land in stripe 0
	for off := int64(0); len(offs) < 200; off++ {
		if si, _ := spot(1, off); si == 0 {
			offs = append(offs, off)
		}
	}
	value := make([]byte, 1000)
	for _, off := range offs {
		vc.insert(1, off, []byte("k"), 0, value)
	}
	held := stripeRingFirstBytes / entrySize(1, len(value)) // give or take the padding of a lap
	for i, off := range offs {
		c, _ := vc.lookup(1, off, []byte("k"), nil, false)
		if newest, oldest := i >= len(offs)-held+2, i < len(offs)-held; c.ok && oldest || !c.ok && newest {
			t.Fatalf("entry %d of %d (the ring holds about %d): found %v", i, len(offs), held, c.ok)
		}
	}
	vc.insert(2, 0, []byte("big"), 0, make([]byte, stripeRingFirstBytes/entryShareMax))
	if vc.holds(2, 0) {
		t.Fatal("an entry over its share was cached")
	}
}

// A budget too small for one first ring per stripe means no cache, and a
// nil cache answers nothing.
func TestATinyBudgetMeansNoValueCache(t *testing.T) {
	vc := newValueCache(valueCacheStripes * stripeRingFirstBytes)
	if vc != nil {
		t.Fatal("a cache within too small a budget")
	}
	vc.insert(1, 1, []byte("k"), 0, []byte("v"))
	if c, _ := vc.lookup(1, 1, []byte("k"), nil, true); c.ok || vc.holds(1, 1) {
		t.Fatal("a nil cache answered")
	}
}

// A get of a value read before is answered from memory: no read of the
// log. So is a get after a put over a cached value; a value never read
// is read from the log.
func TestAGetOfACachedValueReadsNoLog(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem())
	_, c := newCache(t, efs, nil, Config{Durable: true})
	defer c.store.Close()
	put(t, c, "read", "r1", PutOptions{})
	put(t, c, "unread", "u1", PutOptions{})
	wantValue(t, c, "read", "r1", 0)
	efs.Inject(errorfs.Rule{Op: errorfs.Read, PathContains: "values"})
	wantValue(t, c, "read", "r1", 0)
	put(t, c, "read", "r2", PutOptions{})
	wantValue(t, c, "read", "r2", 2)
	if n := efs.Injected(); n != 0 {
		t.Fatalf("%d reads of the log", n)
	}
	if _, err := c.Get([]byte("unread"), nil); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("get of a value never read, the log failing: %v", err)
	}
}

// A cached value expires as the record would: its expiry is cached with
// it and checked on every get.
func TestACachedValueExpires(t *testing.T) {
	clk := newClock()
	_, c := newCache(t, vfs.NewMem(), clk, Config{Durable: true})
	defer c.store.Close()
	put(t, c, "k", "v", PutOptions{TTL: time.Minute})
	wantValue(t, c, "k", "v", 0)
	if st := c.store.values.stats(); st.Inserts != 1 {
		t.Fatalf("value cache %+v", st)
	}
	clk.Advance(time.Minute)
	wantMissing(t, c, "k")
	if w := put(t, c, "k", "w", PutOptions{}); w.Existed {
		t.Fatalf("a put over an expired cached value: %+v", w)
	}
}

// A cache dropped and created again under its name starts at offset 0
// again: the values cached for the old one's shards are never answered
// for the new one's.
func TestARecreatedCacheDoesNotSeeTheOldValues(t *testing.T) {
	s, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true})
	defer s.Close()
	put(t, c, "k", "old", PutOptions{})
	wantValue(t, c, "k", "old", 0)
	if err := s.Drop(cid); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(cid, Config{Durable: true}); err != nil {
		t.Fatal(err)
	}
	c = mustCache(t, s)
	put(t, c, "k", "new", PutOptions{})
	wantValue(t, c, "k", "new", 0)
}

// offsetsInStripe returns n offsets of shard whose entries land in stripe 0.
func offsetsInStripe(shard uint64, n int) []int64 {
	var offs []int64
	for off := int64(0); len(offs) < n; off++ {
		if si, _ := spot(shard, off); si == 0 {
			offs = append(offs, off)
		}
	}
	return offs
}

// A table slot left pointing at an evicted entry is never followed, even
// when the bytes now there (a later entry's value, which a client chooses)
// look exactly like that entry; and an entry is found only under its own
// shard, whatever the set.
func TestTheValueCacheNeverReadsAnEvictedPosition(t *testing.T) {
	vc, _ := smallValueCache(t, 1)
	offs := offsetsInStripe(1, 11)
	offX, offA, offY := offs[0], offs[1], offs[2]
	vc.insert(1, offX, []byte("x"), 0, make([]byte, 100)) // ring bytes 0..136
	vc.insert(1, offA, []byte("a"), 0, []byte("genuine")) // 136..176
	_, set := spot(1, offA)
	if _, ok := vc.stripes[0].find(2, offA, set); ok {
		t.Fatal("an entry found under another shard")
	}
	for _, off := range offs[3:] { // 8 x 8032 bytes: 176..64432
		vc.insert(1, off, []byte("f"), 0, make([]byte, 8000))
	}
	// Y wraps the ring to byte 0, evicting X and A; its value covers A's
	// old place (byte 136) with a forgery of A.
	forged := make([]byte, 1200)
	fake := forged[136-entryHeaderBytes-1:]
	binary.LittleEndian.PutUint64(fake[0:], uint64(offA))
	binary.LittleEndian.PutUint64(fake[16:], 1)
	binary.LittleEndian.PutUint32(fake[24:], uint32(len("forged")))
	binary.LittleEndian.PutUint16(fake[28:], 1)
	copy(fake[entryHeaderBytes:], "aforged")
	vc.insert(1, offY, []byte("y"), 0, forged)
	if c, v := vc.lookup(1, offY, []byte("y"), nil, true); !c.ok || !bytes.Equal(v, forged) {
		t.Fatal("the wrapping entry is not there")
	}
	if c, v := vc.lookup(1, offA, []byte("a"), nil, true); c.ok {
		t.Fatalf("an evicted entry answered: %+v %q", c, v)
	}
}

// A stripe whose positions reach posLimit starts over empty: what it held
// is gone (a miss, never a wrong answer), and entries inserted after are
// found, their positions in a slot's bits again.
func TestAStripeStartsOverBeforeItsPositionsOutgrowASlot(t *testing.T) {
	vc, _ := smallValueCache(t, 1)
	offs := offsetsInStripe(1, 3)
	vc.insert(1, offs[0], []byte("a"), 0, []byte("old"))
	st := &vc.stripes[0]
	st.head += posLimit - st.tail // as if posLimit bytes had gone through
	st.tail = posLimit
	vc.insert(1, offs[1], []byte("b"), 0, []byte("new"))
	if st.tail >= posLimit || st.tail == 0 {
		t.Fatalf("tail %d after the insert at the limit", st.tail)
	}
	if c, _ := vc.lookup(1, offs[0], []byte("a"), nil, true); c.ok {
		t.Fatal("an entry from before the restart answered")
	}
	if c, v := vc.lookup(1, offs[1], []byte("b"), nil, true); !c.ok || string(v) != "new" {
		t.Fatalf("the entry inserted at the restart: %+v %q", c, v)
	}
}

// Two entries of one set with different tags are told apart without
// reading the other's bytes, and one whose slot's tag matches is still
// confirmed by its offset and shard in the ring.
func TestASlotTagOnlyNarrowsTheSearch(t *testing.T) {
	vc, _ := smallValueCache(t, 1)
	offs := offsetsInStripe(1, 64)
	for i, off := range offs {
		vc.insert(1, off, []byte("k"), 0, []byte{byte(i)})
	}
	for i, off := range offs {
		if c, v := vc.lookup(1, off, []byte("k"), nil, true); c.ok && (len(v) != 1 || v[0] != byte(i)) {
			t.Fatalf("offset %d answered %v", off, v)
		}
		if c, _ := vc.lookup(2, off, []byte("k"), nil, true); c.ok {
			t.Fatalf("offset %d found under another shard", off)
		}
	}
	if c, _ := vc.lookup(1, offs[len(offs)-1], []byte("k"), nil, false); !c.ok {
		t.Fatal("the last entry inserted is not found")
	}
}

// BenchmarkValueCacheLookup looks up records in a full 64 MiB cache of
// 256-byte values (every set full, as under a get-heavy load), about half
// of them held and half evicted: the cost of a get's or a writer's
// lookup under the stripe's lock.
func BenchmarkValueCacheLookup(b *testing.B) {
	vc := newValueCache(DefaultValueCacheBytes)
	key, value := []byte("key:0000000000"), make([]byte, 256)
	const shard = 1
	n := int64(0)
	for ; vc.stats().Bytes < DefaultValueCacheBytes*9/10 || n < 1<<20; n++ {
		vc.insert(shard, n, key, 0, value)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	offs := make([]int64, 1<<16)
	held := int64(vc.stats().Inserts) * 17 / 100 // about what 64 MiB holds of these
	for i := range offs {
		offs[i] = n - 1 - rng.Int64N(2*held) // the older half has been evicted
	}
	dst := make([]byte, 0, len(value))
	b.ReportAllocs()
	b.ResetTimer()
	hits := 0
	for i := range b.N {
		c, _ := vc.lookup(shard, offs[i%len(offs)], key, dst[:0], true)
		if c.ok {
			hits++
		}
	}
	b.ReportMetric(float64(hits)/float64(b.N), "hit-ratio")
}
