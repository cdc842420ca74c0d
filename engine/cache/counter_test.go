package cache

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

func add(t *testing.T, c *Cache, key string, delta int64) CounterValue {
	t.Helper()
	v, err := c.CounterAdd([]byte(key), delta)
	if err != nil {
		t.Fatalf("add %s %d: %v", key, delta, err)
	}
	return v
}

func counterGet(t *testing.T, c *Cache, key string) CounterValue {
	t.Helper()
	v, err := c.CounterGet([]byte(key))
	if err != nil {
		t.Fatalf("get counter %s: %v", key, err)
	}
	return v
}

// The contract's test: each add answers with the sum including itself;
// never-written is distinct from zero; concurrent adds each see a distinct
// running sum, and the last is the total.
func TestAnAddAnswersWithTheSumIncludingIt(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true, Shards: 2})
	defer c.store.Close()
	if v := counterGet(t, c, "n"); v.Exists {
		t.Fatalf("a counter never written: %+v", v)
	}
	if v := add(t, c, "n", 5); !v.Exists || v.Sum != 5 {
		t.Fatalf("first add: %+v", v)
	}
	v := add(t, c, "n", -2)
	if v.Sum != 3 {
		t.Fatalf("second add: %+v", v)
	}
	if g := counterGet(t, c, "n"); g != v {
		t.Fatalf("get %+v after the add answered %+v", g, v)
	}
	if z := add(t, c, "zero", 0); !z.Exists || z.Sum != 0 {
		t.Fatalf("an add of zero makes the counter exist at zero: %+v", z)
	}
	if g := counterGet(t, c, "zero"); !g.Exists || g.Sum != 0 {
		t.Fatalf("zero: %+v", g)
	}
	// A counter and a cache value sharing a key are unrelated.
	put(t, c, "n", "a value", PutOptions{})
	if g := counterGet(t, c, "n"); g.Sum != 3 {
		t.Fatalf("a cache put moved the counter: %+v", g)
	}
	wantValue(t, c, "n", "a value", -1)

	var mu sync.Mutex
	var sums []int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				v, err := c.CounterAdd([]byte("hits"), 1)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				sums = append(sums, v.Sum)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(sums)
	for i, s := range sums {
		if s != int64(i+1) {
			t.Fatalf("concurrent adds answered %v..., not each running sum once", sums[:i+1])
		}
	}
	if _, err := c.CounterAdd([]byte("hits"), math.MaxInt64); !errors.Is(err, ErrCounterOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	if g := counterGet(t, c, "hits"); g.Sum != 200 {
		t.Fatalf("a refused add moved the sum: %+v", g)
	}
}

// The contract's test: sums survive a restart, and every acknowledged add
// survives a crash (OnCommit).
func TestACounterSurvivesARestart(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{Durable: true, Shards: 3})
	want := map[string]CounterValue{}
	for i := range 90 {
		k := fmt.Sprintf("c%d", i%9)
		want[k] = add(t, c, k, int64(i-40))
	}
	check := func(c *Cache, what string) {
		t.Helper()
		for k, v := range want {
			if g := counterGet(t, c, k); g != v {
				t.Fatalf("%s: %s = %+v, want %+v", what, k, g, v)
			}
		}
		if g := counterGet(t, c, "never"); g.Exists {
			t.Fatalf("%s: never-written counter exists", what)
		}
	}
	s, c = reopen(t, s, mem, nil)
	check(c, "after a restart")
	next := add(t, c, "c0", 1)
	if next.Sum != want["c0"].Sum+1 {
		t.Fatalf("counting on after a restart: %+v", next)
	}
	want["c0"] = next
	img := mem.Crash(vfs.DropUnsynced)
	s.Close()
	s = openStore(t, testOptions(img, nil))
	defer s.Close()
	check(mustCache(t, s), "after a crash")
}

// The contract's test: compaction folds adds into checkpoints and drops
// them, and moves neither a sum nor an offset: the sums, the offset of
// each key's last add, and the offset the next add gets are what they
// would have been, before and after a restart.
func TestCompactionMovesNeitherTheSumNorTheOffsets(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{Durable: true})
	want := map[string]CounterValue{}
	for i := range 400 {
		k := fmt.Sprintf("c%d", i%4)
		want[k] = add(t, c, k, int64(i))
	}
	cs := &c.held(0).counters
	bytesBefore, endBefore := cs.logs.Log().Stats().Bytes, cs.logs.Log().End()
	st, err := c.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if st.Logs == 0 {
		t.Fatal("nothing compacted")
	}
	bytesAfter := cs.logs.Log().Stats().Bytes
	if bytesAfter*2 > bytesBefore {
		t.Fatalf("compaction kept %d of %d bytes", bytesAfter, bytesBefore)
	}
	// The checkpoints were appended after every add; nothing before them
	// moved, so the next add gets the next offset in line.
	if cs.logs.Log().End() != endBefore+4 {
		t.Fatalf("end %d -> %d: expected four checkpoints appended", endBefore, cs.logs.Log().End())
	}
	check := func(c *Cache, what string) {
		t.Helper()
		for k, v := range want {
			if g := counterGet(t, c, k); g != v {
				t.Fatalf("%s: %s = %+v, want %+v", what, k, g, v)
			}
		}
	}
	check(c, "after compaction")
	next := add(t, c, "c1", 10)
	if next.Offset != endBefore+4 || next.Sum != want["c1"].Sum+10 {
		t.Fatalf("the first add after compaction: %+v (log ended at %d)", next, endBefore+4)
	}
	want["c1"] = next
	for i := range 200 { // compact again, over checkpoints this time
		k := fmt.Sprintf("c%d", i%4)
		want[k] = add(t, c, k, 1)
	}
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	check(c, "after a second compaction")
	s, c = reopen(t, s, mem, nil)
	defer s.Close()
	check(c, "after a restart")
}
