package cache

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment/vfs"
)

// A replication factor above 1 needs a replication to ship the logs and a
// durable cache to have logs worth shipping; a store alone refuses it, as
// the engine refuses such a stream.
func TestAReplicatedCacheIsRefusedWithoutAReplicationOrDurability(t *testing.T) {
	s := openStore(t, testOptions(vfs.NewMem(), nil))
	defer s.Close()
	if _, err := s.Create(cid, Config{Durable: true, ReplicationFactor: 3}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a cache of replication factor 3 on a store alone: %v, want ErrInvalidConfig", err)
	}
	o := testOptions(vfs.NewMem(), nil)
	o.Replication = newFakeReplication()
	s2 := openStore(t, o)
	defer s2.Close()
	if _, err := s2.Create(cid, Config{ReplicationFactor: 3}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a cache of replication factor 3 not durable: %v, want ErrInvalidConfig", err)
	}
	if _, err := s2.Create(cid, Config{ReplicationFactor: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a replication factor of -1: %v, want ErrInvalidConfig", err)
	}
}

// Every shard of a replicated cache holds both its logs at once, the
// counters' before any add, under the cache's own name (as the cluster
// names its object), each with its directory.
func TestAReplicatedShardHoldsBothItsLogsAtOpen(t *testing.T) {
	r := newFakeReplication()
	_, _ = replicatedStore(t, vfs.NewMem(), r, Config{Shards: 2})
	if len(r.holds) != 4 {
		t.Fatalf("%d parts held, want 4 (two shards, two logs each): %+v", len(r.holds), r.holds)
	}
	want := engine.StreamID{Tenant: cid.Tenant, Namespace: cid.Namespace, Name: cid.Name}
	for _, pl := range r.holds {
		dir := map[int]string{engine.PartCacheValues: "values", engine.PartCounters: "counters"}[pl.Part]
		if !pl.Cache || pl.ID != want || pl.Log == nil || dir == "" || filepath.Base(pl.Dir) != dir {
			t.Errorf("held %+v, want a cache part under %v in its %s directory", pl, want, dir)
		}
	}
}

// A shard this broker follows serves nothing and appends nothing: every
// operation is redirected, and the logs stay as the replica leaves them.
func TestAFollowingShardServesNothingAndAppendsNothing(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.follows(0, 2)
	var nle *engine.NotLeaderError
	if _, err := c.Put([]byte("k"), []byte("v"), PutOptions{}); !errors.As(err, &nle) {
		t.Errorf("put: %v, want *engine.NotLeaderError", err)
	}
	if _, err := c.Delete([]byte("k"), Condition{}); !errors.As(err, &nle) {
		t.Errorf("delete: %v, want *engine.NotLeaderError", err)
	}
	if _, err := c.Get([]byte("k"), nil); !errors.As(err, &nle) {
		t.Errorf("get: %v, want *engine.NotLeaderError", err)
	}
	for _, opts := range []WatchOptions{{Key: []byte("k")}, {Key: []byte("k"), Retained: true}, {Key: []byte("k"), Resume: true}} {
		if _, err := c.Watch(opts); !errors.As(err, &nle) {
			t.Errorf("watch %+v: %v, want *engine.NotLeaderError", opts, err)
		}
	}
	if _, err := c.CounterAdd([]byte("n"), 1); !errors.As(err, &nle) {
		t.Errorf("counter add: %v, want *engine.NotLeaderError", err)
	}
	if _, err := c.CounterGet([]byte("n")); !errors.As(err, &nle) {
		t.Errorf("counter get: %v, want *engine.NotLeaderError", err)
	}
	if st, err := c.Compact(); err != nil || st.Logs != 0 {
		t.Errorf("compact of a follower: %+v %v, want nothing done", st, err)
	}
	for part := range 2 {
		if p := r.part(t, 0, part); p.pl.Log.Stats().Appended != 0 || p.appended.Load() != 0 {
			t.Errorf("part %d of a follower: %d records appended, %d shipped; want none", part,
				p.pl.Log.Stats().Appended, p.appended.Load())
		}
	}
}

// A leader appends at the generation Leading returns, not the catalog's,
// and tells the replica after every append.
func TestALeaderAppendsAtItsLeadershipsGeneration(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.leads(0, 7)
	put(t, c, "k", "v", PutOptions{})
	if _, err := c.Delete([]byte("k"), Condition{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CounterAdd([]byte("n"), 3); err != nil {
		t.Fatal(err)
	}
	for part, want := range []int{2, 1} {
		p := r.part(t, 0, part)
		recs := p.records(t)
		if len(recs) != want || p.appended.Load() != int64(want) {
			t.Fatalf("part %d: %d records, %d shipped; want %d of each", part, len(recs), p.appended.Load(), want)
		}
		for _, rec := range recs {
			if rec.Generation != 7 {
				t.Errorf("part %d: record at %d of generation %d, want 7 (the leadership's)", part, rec.Offset, rec.Generation)
			}
		}
	}
}

// A broker that leads again at a new generation rebuilds the index and
// the sums from the logs as the replica left them: a follower's
// truncation and its appends of another leader's records are in, the
// writes the truncation took are not, and writing goes on from the log's
// end at the new generation.
func TestANewGenerationRebuildsTheIndexAndTheSumsFromTheLogs(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.leads(0, 2)
	put(t, c, "a", "a2", PutOptions{})
	put(t, c, "b", "b2", PutOptions{})
	if _, err := c.CounterAdd([]byte("n"), 5); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CounterAdd([]byte("n"), 100); err != nil {
		t.Fatal(err)
	}
	r.follows(0, 3)
	values, counters := r.part(t, 0, engine.PartCacheValues), r.part(t, 0, engine.PartCounters)
	if err := values.pl.Log.Truncate(1); err != nil { // the new leader never had b2
		t.Fatal(err)
	}
	if err := counters.pl.Log.Truncate(1); err != nil { // nor the add of 100
		t.Fatal(err)
	}
	values.follow(t, 3, valueEntry("c", "c3"), valueEntry("a", "a3"))
	counters.follow(t, 3, addEntry("n", 10), addEntry("m", -4))
	r.leads(0, 4)
	wantValue(t, c, "a", "a3", 2)
	wantValue(t, c, "c", "c3", 1)
	wantMissing(t, c, "b")
	for key, sum := range map[string]int64{"n": 15, "m": -4} {
		if v, err := c.CounterGet([]byte(key)); err != nil || v.Sum != sum {
			t.Errorf("counter %s after the rebuild: %+v %v, want %d", key, v, err, sum)
		}
	}
	if w := put(t, c, "b", "b4", PutOptions{}); w.Offset != 3 || w.Existed {
		t.Errorf("a put at generation 4: %+v, want offset 3 over no value", w)
	}
	if v, err := c.CounterAdd([]byte("n"), 1); err != nil || v.Sum != 16 || v.Offset != 3 {
		t.Errorf("an add at generation 4: %+v %v, want sum 16 at offset 3", v, err)
	}
	for _, p := range []*fakePart{values, counters} {
		recs := p.records(t)
		if last := recs[len(recs)-1]; last.Generation != 4 {
			t.Errorf("part %d: the write at generation 4 carries %d", p.pl.Part, last.Generation)
		}
	}
}

// Records a follower's replica makes visible reach no watch: the watch of
// the leadership that ended ends with the redirect, never delivering
// another leader's record as its own.
func TestWhatAFollowerAppendsReachesNoWatch(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.leads(0, 2)
	w, err := c.Watch(WatchOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	put(t, c, "k", "mine", PutOptions{})
	if ev := mustNext(t, w); string(ev.Value) != "mine" {
		t.Fatalf("the leader's own write: %s", describe(ev))
	}
	r.follows(0, 3)
	r.part(t, 0, engine.PartCacheValues).follow(t, 3, valueEntry("k", "theirs"))
	ev, err := next(t, w)
	var nle *engine.NotLeaderError
	if !errors.As(err, &nle) {
		t.Fatalf("the watch after a follower's append: %s %v, want the end with *engine.NotLeaderError", describe(ev), err)
	}
}

// A retained watch started on a shard that leads again is served from the
// rebuilt index (the value a follower's replica appended), then live.
func TestARetainedWatchOnANewLeadershipServesTheRebuiltIndex(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.follows(0, 2)
	r.part(t, 0, engine.PartCacheValues).follow(t, 2, valueEntry("k", "shipped"))
	r.leads(0, 3)
	w, err := c.Watch(WatchOptions{Key: []byte("k"), Retained: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ev := mustNext(t, w); !ev.Snapshot || string(ev.Value) != "shipped" || ev.Offset != 0 {
		t.Fatalf("the retained value: %s, want shipped at 0 from the snapshot", describe(ev))
	}
	put(t, c, "k", "live", PutOptions{})
	if ev := mustNext(t, w); ev.Snapshot || string(ev.Value) != "live" || ev.Offset != 1 {
		t.Fatalf("the live write: %s, want live at 1", describe(ev))
	}
}

// A leadership's watches end once it is over, even when this broker leads
// again before any record of another leader shows up.
func TestALeadershipsWatchesEndWithIt(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.leads(0, 2)
	w, err := c.Watch(WatchOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.leads(0, 4)
	put(t, c, "k", "v", PutOptions{})
	if ev, err := next(t, w); !errors.Is(err, engine.ErrNotLeader) {
		t.Fatalf("a watch of generation 2 once generation 4 writes: %s %v, want ErrNotLeader", describe(ev), err)
	}
}

// A leader's compaction keeps every record at or above CompactBelow (what
// some follower has not been sent yet); below it, it drops what a cache
// alone drops. The counters' likewise.
func TestCompactionKeepsWhatIsAtOrAboveCompactBelow(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.leads(0, 2)
	values, counters := r.part(t, 0, engine.PartCacheValues), r.part(t, 0, engine.PartCounters)
	for i := range 300 {
		put(t, c, "k", string(rune('a'+i%26))+"-value-of-some-length", PutOptions{})
		if _, err := c.CounterAdd([]byte("n"), 1); err != nil {
			t.Fatal(err)
		}
	}
	const floor = 150
	values.below.Store(floor)
	counters.below.Store(floor)
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*fakePart{values, counters} {
		held := map[int64]bool{}
		for _, rec := range p.records(t) {
			held[rec.Offset] = true
		}
		for off := int64(floor); off < p.pl.Log.End(); off++ {
			if !held[off] {
				t.Fatalf("part %d: offset %d, at or above CompactBelow %d, was compacted away", p.pl.Part, off, floor)
			}
		}
		if len(held) >= int(p.pl.Log.End()) {
			t.Errorf("part %d: nothing below CompactBelow was compacted (%d records held)", p.pl.Part, len(held))
		}
	}
	if v, err := c.CounterGet([]byte("n")); err != nil || v.Sum != 300 {
		t.Errorf("the counter after compaction: %+v %v, want 300", v, err)
	}
	wantValue(t, c, "k", string(rune('a'+299%26))+"-value-of-some-length", 299)
}

// A follower's logs are not compacted: its index is not built, and the
// replica may still truncate them.
func TestAFollowersLogsAreNotCompacted(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.follows(0, 2)
	values := r.part(t, 0, engine.PartCacheValues)
	for i := range 300 {
		values.follow(t, 2, valueEntry("k", string(rune('a'+i%26))+"-value-of-some-length"))
	}
	before := values.pl.Log.Stats().Bytes
	if st, err := c.Compact(); err != nil || st.Logs != 0 || values.pl.Log.Stats().Bytes != before {
		t.Fatalf("compact of a follower: %+v %v, its log %d bytes from %d; want nothing done", st, err,
			values.pl.Log.Stats().Bytes, before)
	}
	if recs := values.records(t); len(recs) != 300 || recs[0].Generation != 2 {
		t.Fatalf("the follower's log: %d records, want the 300 shipped", len(recs))
	}
}

// A write whose leadership check passed but whose log the replica moved
// before its append (a truncation, a follower's append: the leadership
// ended in between) is refused whole with the redirect, the shard is not
// failed, and it is built again when it next leads.
func TestAWriteThatFindsItsLogMovedIsRefusedAndTheShardRebuilt(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.leads(0, 2)
	put(t, c, "k", "v2", PutOptions{})
	if _, err := c.CounterAdd([]byte("n"), 1); err != nil {
		t.Fatal(err)
	}
	values, counters := r.part(t, 0, engine.PartCacheValues), r.part(t, 0, engine.PartCounters)
	values.follow(t, 3, valueEntry("k", "v3")) // Leading still says 2: the race
	counters.follow(t, 3, addEntry("n", 10))
	var nle *engine.NotLeaderError
	if _, err := c.Put([]byte("k"), []byte("late"), PutOptions{}); !errors.As(err, &nle) {
		t.Fatalf("a put onto a log the replica moved: %v, want *engine.NotLeaderError", err)
	}
	if _, err := c.CounterAdd([]byte("n"), 100); !errors.As(err, &nle) {
		t.Fatalf("an add onto a log the replica moved: %v, want *engine.NotLeaderError", err)
	}
	if n := values.pl.Log.Stats().Appended; n != 2 {
		t.Fatalf("the values log holds %d records, want the 2 it had", n)
	}
	r.leads(0, 4)
	wantValue(t, c, "k", "v3", 1)
	if v, err := c.CounterAdd([]byte("n"), 1); err != nil || v.Sum != 12 {
		t.Fatalf("an add at generation 4: %+v %v, want 12", v, err)
	}
}

// The counters follow their own part's leadership: while the shard's new
// leader adopts a follower's counters tail (its replica leads the values
// but not yet the counters) the counters are neither folded nor added to;
// once the part leads they fold what it holds then.
func TestCountersServeOnlyOnceTheirOwnPartLeads(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	counters := r.part(t, 0, engine.PartCounters)
	own := counters.leadsAlone()
	r.leads(0, 2)
	put(t, c, "k", "v", PutOptions{})
	var nle *engine.NotLeaderError
	if _, err := c.CounterAdd([]byte("n"), 1); !errors.As(err, &nle) {
		t.Fatalf("an add while the counters part does not lead: %v, want *engine.NotLeaderError", err)
	}
	counters.follow(t, 1, addEntry("n", 7)) // the adopted tail
	own.gen.Store(2)
	own.ok.Store(true)
	if v, err := c.CounterAdd([]byte("n"), 1); err != nil || v.Sum != 8 {
		t.Fatalf("an add once the counters part leads: %+v %v, want 8", v, err)
	}
}
