package cache

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment/vfs"
)

// The contract's test: with a storage directory, values, deletes and
// their offsets survive a clean restart, and every acknowledged write
// (OnCommit) survives a crash.
func TestACacheSurvivesARestart(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{Durable: true, Shards: 3})
	want := map[string]Written{}
	for i := range 60 {
		k := fmt.Sprintf("k%d", i%20)
		want[k] = put(t, c, k, fmt.Sprintf("v%d", i), PutOptions{})
	}
	for i := range 5 {
		k := fmt.Sprintf("k%d", i)
		if _, err := c.Delete([]byte(k), Condition{}); err != nil {
			t.Fatal(err)
		}
		delete(want, k)
	}
	check := func(c *Cache, what string) {
		t.Helper()
		for i := range 20 {
			k := fmt.Sprintf("k%d", i)
			w, ok := want[k]
			if !ok {
				wantMissing(t, c, k)
				continue
			}
			wantValue(t, c, k, fmt.Sprintf("v%d", 40+i), w.Offset)
		}
	}
	check(c, "before")
	s, c = reopen(t, s, mem, nil)
	check(c, "after a clean restart")
	img := mem.Crash(vfs.DropUnsynced)
	s.Close()
	s = openStore(t, testOptions(img, nil))
	defer s.Close()
	check(mustCache(t, s), "after a crash")
}

// The contract's test: an expiry is an absolute time stored with the
// write, so one that passes while the broker is down is still an expiry,
// and one that has not passed is kept with its time.
func TestAnExpirySurvivesARestart(t *testing.T) {
	mem, clk := vfs.NewMem(), newClock()
	s, c := newCache(t, mem, clk, Config{Durable: true})
	short := put(t, c, "short", "s", PutOptions{TTL: 10 * time.Second})
	long := put(t, c, "long", "l", PutOptions{TTL: time.Hour})
	at := put(t, c, "at", "a", PutOptions{ExpiresAt: clk.Now().Add(time.Minute).UnixNano()})
	put(t, c, "forever", "f", PutOptions{})
	if short.ExpiresAt != clk.Now().Add(10*time.Second).UnixNano() {
		t.Fatalf("expiry %d", short.ExpiresAt)
	}
	s.Close()
	clk.Advance(30 * time.Second) // the broker is down while "short" expires
	s = openStore(t, testOptions(mem, clk))
	c = mustCache(t, s)
	wantMissing(t, c, "short")
	if it := get(t, c, "long"); !it.Found || it.ExpiresAt != long.ExpiresAt {
		t.Fatalf("long: %+v, want expiry %d", it, long.ExpiresAt)
	}
	wantValue(t, c, "forever", "f", -1)
	if it := get(t, c, "at"); !it.Found || it.ExpiresAt != at.ExpiresAt {
		t.Fatalf("at: %+v, want expiry %d", it, at.ExpiresAt)
	}
	clk.Advance(time.Minute)
	s, c = reopen(t, s, mem, clk)
	defer s.Close()
	wantMissing(t, c, "at")
	wantValue(t, c, "long", "l", long.Offset)
}

// The contract's test: of two writes of one key the one the shard applied
// later is the value, also under concurrent writers and after a restart.
func TestALaterWriteWins(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{Durable: true, Shards: 2})
	put(t, c, "k", "first", PutOptions{})
	second := put(t, c, "k", "second", PutOptions{})
	wantValue(t, c, "k", "second", second.Offset)

	var mu sync.Mutex
	last := Written{Offset: -1}
	lastValue := ""
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 25 {
				v := fmt.Sprintf("w%d-%d", w, i)
				res, err := c.Put([]byte("hot"), []byte(v), PutOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if res.Offset > last.Offset {
					last, lastValue = res, v
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	wantValue(t, c, "hot", lastValue, last.Offset)
	s, c = reopen(t, s, mem, nil)
	defer s.Close()
	wantValue(t, c, "hot", lastValue, last.Offset)
	wantValue(t, c, "k", "second", second.Offset)
}

// Without a storage directory a cache lives in memory: it works the same,
// watches included, and a restart loses it. A durable cache or a counter
// is refused.
func TestWithoutStorageACacheLivesInMemory(t *testing.T) {
	s := openStore(t, testOptions(nil, nil))
	if _, err := s.Create(cid, Config{Durable: true}); !errors.Is(err, ErrNoStorage) {
		t.Fatalf("durable cache without storage: %v", err)
	}
	if _, err := s.Create(cid, Config{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	for i := range 200 {
		put(t, c, fmt.Sprintf("k%d", i%10), fmt.Sprintf("v%d", i), PutOptions{})
	}
	wantValue(t, c, "k3", "v193", -1)
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	wantValue(t, c, "k3", "v193", -1)
	if _, err := c.CounterAdd([]byte("n"), 1); !errors.Is(err, ErrNoStorage) {
		t.Fatalf("counter without storage: %v", err)
	}
	s.Close()
	s = openStore(t, testOptions(nil, nil))
	defer s.Close()
	if _, err := s.Cache(cid); !errors.Is(err, ErrCacheNotFound) {
		t.Fatalf("an in-memory cache outlived its store: %v", err)
	}
}

// A non-durable cache on a broker with storage keeps its catalog entry and
// comes back empty.
func TestANonDurableCacheComesBackEmpty(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{})
	put(t, c, "k", "v", PutOptions{})
	s, c = reopen(t, s, mem, nil)
	defer s.Close()
	wantMissing(t, c, "k")
	put(t, c, "k", "again", PutOptions{})
	wantValue(t, c, "k", "again", 0)
}

type notMine struct{ shard int }

func (n notMine) Leader(id engine.StreamID, shard int) (bool, string) {
	return shard != n.shard || id.Name != OwnershipPrefix+cid.Name, "10.0.0.2:7000"
}

// Every write asks Ownership first; a shard led elsewhere refuses the write
// with the leader to redirect to, and appends nothing.
func TestAWriteToAShardLedElsewhereIsRefused(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, nil)
	c0 := newCacheWith(t, o, Config{Durable: true, Shards: 4})
	theirs := []byte("k0")
	for i := 0; c0.ShardFor(theirs) != 1; i++ {
		theirs = fmt.Appendf(nil, "k%d", i)
	}
	c0.store.Close()
	o.Owner = notMine{shard: 1}
	c := newCacheWith(t, o, Config{})
	defer c.store.Close()
	_, err := c.Put(theirs, []byte("v"), PutOptions{})
	var nl *engine.NotLeaderError
	if !errors.As(err, &nl) || nl.Shard != 1 || nl.Leader != "10.0.0.2:7000" || !errors.Is(err, engine.ErrNotLeader) {
		t.Fatalf("put to a shard led elsewhere: %v", err)
	}
	for _, f := range []func() error{
		func() error { _, err := c.Delete(theirs, Condition{}); return err },
		func() error { _, err := c.CounterAdd(theirs, 1); return err },
	} {
		if err := f(); !errors.Is(err, engine.ErrNotLeader) {
			t.Fatalf("write to a shard led elsewhere: %v", err)
		}
	}
	if st := c.Stats()[1]; st.End != 0 {
		t.Fatalf("a refused write appended: %+v", st)
	}
}

func newCacheWith(t *testing.T, o Options, cfg Config) *Cache {
	t.Helper()
	s := openStore(t, o)
	if _, err := s.Cache(cid); err == nil {
		return mustCache(t, s)
	}
	if _, err := s.Create(cid, cfg); err != nil {
		t.Fatal(err)
	}
	return mustCache(t, s)
}

func TestLimitsAreCheckedBeforeAnything(t *testing.T) {
	o := testOptions(nil, nil)
	o.KeyBytesMax, o.ValueBytesMax = 8, 16
	c := newCacheWith(t, o, Config{})
	defer c.store.Close()
	cases := []struct {
		key, value string
		opts       PutOptions
		want       error
	}{
		{"", "v", PutOptions{}, ErrEmptyKey},
		{"123456789", "v", PutOptions{}, ErrKeyTooLarge},
		{"k", "12345678901234567", PutOptions{}, ErrValueTooLarge},
		{"k", "v", PutOptions{TTL: -time.Second}, ErrInvalidExpiry},
		{"k", "v", PutOptions{TTL: time.Second, ExpiresAt: 5}, ErrInvalidExpiry},
		{"k", "v", PutOptions{Cond: Condition{Kind: 9}}, ErrInvalidCondition},
	}
	for _, tc := range cases {
		if _, err := c.Put([]byte(tc.key), []byte(tc.value), tc.opts); !errors.Is(err, tc.want) {
			t.Fatalf("put %q=%q %+v: %v, want %v", tc.key, tc.value, tc.opts, err, tc.want)
		}
	}
	if _, err := c.Delete([]byte("k"), Condition{Kind: CondIfAbsent}); !errors.Is(err, ErrInvalidCondition) {
		t.Fatalf("delete if absent: %v", err)
	}
	if st := c.Stats()[0]; st.End != 0 {
		t.Fatalf("a refused write appended: %+v", st)
	}
}

func TestTheCatalogSurvivesARestartAndDropRemovesEverything(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{Durable: true, Shards: 2})
	put(t, c, "k", "v", PutOptions{})
	if _, err := c.CounterAdd([]byte("k"), 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(cid, Config{}); !errors.Is(err, ErrCacheExists) {
		t.Fatalf("create twice: %v", err)
	}
	s, c = reopen(t, s, mem, nil)
	if infos := s.List("acme", ""); len(infos) != 1 || infos[0].Config.Shards != 2 || !infos[0].Config.Durable {
		t.Fatalf("catalog after restart: %+v", infos)
	}
	w, err := c.Watch(WatchOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Drop(cid); err != nil {
		t.Fatal(err)
	}
	if _, err := next(t, w); !errors.Is(err, ErrCacheDropped) {
		t.Fatalf("watch of a dropped cache: %v", err)
	}
	if _, err := c.Put([]byte("k"), []byte("v"), PutOptions{}); !errors.Is(err, ErrCacheDropped) {
		t.Fatalf("put to a dropped cache: %v", err)
	}
	s = reopenEmpty(t, s, mem)
	defer s.Close()
	if _, err := s.Create(cid, Config{Durable: true, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	c = mustCache(t, s)
	wantMissing(t, c, "k")
	if v, _ := c.CounterGet([]byte("k")); v.Exists {
		t.Fatalf("a dropped cache's counter came back: %+v", v)
	}
}

// reopenEmpty reopens a store whose only cache was dropped.
func reopenEmpty(t *testing.T, s *Store, fs vfs.FS) *Store {
	t.Helper()
	s.Close()
	s = openStore(t, testOptions(fs, nil))
	if _, err := s.Cache(cid); !errors.Is(err, ErrCacheNotFound) {
		t.Fatalf("a dropped cache is back: %v", err)
	}
	return s
}
