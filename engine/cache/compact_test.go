package cache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// The contract's test: compaction rewrites the live set and drops
// superseded, deleted and expired records, never moving a live value's
// offset; the values read back are the same before and after, and after a
// restart.
func TestCompactionReclaimsOverwrittenRecords(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{Durable: true, Shards: 2})
	latest := map[string]Written{}
	for i := range 400 {
		k := fmt.Sprintf("k%d", i%10)
		latest[k] = put(t, c, k, fmt.Sprintf("v%d-%0100d", i, i), PutOptions{})
	}
	for _, k := range []string{"k0", "k1"} {
		if _, err := c.Delete([]byte(k), Condition{}); err != nil {
			t.Fatal(err)
		}
		delete(latest, k)
	}
	for range 40 { // seal what came before
		put(t, c, "filler", fmt.Sprintf("%0100d", 0), PutOptions{})
	}
	latest["filler"] = put(t, c, "filler", "last", PutOptions{})
	before := totalBytes(c)
	st, err := c.Compact()
	if err != nil {
		t.Fatal(err)
	}
	after := totalBytes(c)
	if st.Logs == 0 || after*4 > before || st.BytesAfter*4 > st.BytesBefore {
		t.Fatalf("compaction %+v: %d bytes -> %d", st, before, after)
	}
	check := func(c *Cache, what string) {
		t.Helper()
		for i := range 10 {
			k := fmt.Sprintf("k%d", i)
			w, ok := latest[k]
			if !ok {
				wantMissing(t, c, k)
				continue
			}
			it := get(t, c, k)
			if !it.Found || it.Offset != w.Offset {
				t.Fatalf("%s: %s = %+v, want offset %d", what, k, it, w.Offset)
			}
		}
		wantValue(t, c, "filler", "last", latest["filler"].Offset)
	}
	check(c, "after compaction")
	end := c.Stats()
	next := put(t, c, "k5", "after", PutOptions{})
	if sh := c.held(c.ShardFor([]byte("k5"))); next.Offset != end[sh.index].End {
		t.Fatalf("the first write after compaction got offset %d; the shard ended at %d", next.Offset, end[sh.index].End)
	}
	latest["k5"] = next
	s, c = reopen(t, s, mem, nil)
	defer s.Close()
	check(c, "after restart")
}

func totalBytes(c *Cache) int64 {
	var n int64
	for _, st := range c.Stats() {
		n += st.LogBytes
	}
	return n
}

// Compaction runs beside writes and reads without blocking them, and every
// acknowledged value is the one read afterwards.
func TestCompactionRunsBesideWritesAndReads(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true})
	defer c.store.Close()
	var mu sync.Mutex
	latest := map[string]string{}
	var wg sync.WaitGroup
	var writes atomic.Int64
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k, v := fmt.Sprintf("k%d", i%16), fmt.Sprintf("w%d-%d-%050d", w, i, i)
				mu.Lock() // one writer per key at a time, so the last ack is the value
				if _, err := c.Put([]byte(k), []byte(v), PutOptions{}); err != nil {
					mu.Unlock()
					t.Error(err)
					return
				}
				latest[k] = v
				mu.Unlock()
				writes.Add(1)
				if _, err := c.Get([]byte(k), nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for compactions := 0; compactions < 10 || writes.Load() < 2000; compactions++ {
		if _, err := c.Compact(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	for k, v := range latest {
		wantValue(t, c, k, v, -1)
	}
	if c.Stats()[0].Compactions == 0 {
		t.Fatal("no compaction ran")
	}
}

// The background compactor compacts a shard once it has grown enough.
func TestTheCompactorCompactsAShardThatGrew(t *testing.T) {
	clk := newClock()
	o := testOptions(vfs.NewMem(), clk)
	o.CompactMinBytes = 8 << 10 // 8 KiB of growth; no ticker: the test ticks
	s := openStore(t, o)
	defer s.Close()
	if _, err := s.Create(cid, Config{Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	for i := range 40 {
		put(t, c, "k", fmt.Sprintf("%0100d", i), PutOptions{})
	}
	s.compactDue() // what the ticker does
	if st := c.Stats()[0]; st.Compactions != 0 {
		t.Fatalf("compacted a shard that had not grown enough: %+v", st)
	}
	for i := range 300 {
		put(t, c, "k", fmt.Sprintf("%0100d", i), PutOptions{})
	}
	s.compactDue()
	if st := c.Stats()[0]; st.Compactions != 1 || st.LogBytes > 8<<10 {
		t.Fatalf("not compacted: %+v", st)
	}
}
