package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// A Quorum cache (quorum.go) on a fake replication whose parts the test
// commits: a write is told only once its part vouches for it, and gets,
// counter gets and watches show only what the part committed.

// errNoMajority is the refusal a Quorum part gives without a majority.
var errNoMajority = errors.Join(wire.CodeNoQuorum, errors.New("no majority in time (test)"))

// writeResult is a write's answer, sent on a channel.
type writeResult struct {
	w   Written
	err error
}

type chanWriter chan writeResult

func (c chanWriter) CacheWritten(w Written, err error) { c <- writeResult{w, err} }

type chanAdder chan error

func (c chanAdder) CounterAdded(_ CounterValue, err error) { c <- err }

func quorumCache(t *testing.T) (*fakeReplication, *Cache) {
	t.Helper()
	r := newFakeReplication()
	o := testOptions(vfs.NewMem(), nil)
	o.Replication, o.QuorumTimeout = r, 50*time.Millisecond
	s := openStore(t, o)
	t.Cleanup(func() { s.Close() })
	if _, err := s.Create(cid, Config{Durable: true, ReplicationFactor: 3, Consistency: engine.ConsistencyQuorum}); err != nil {
		t.Fatal(err)
	}
	r.leads(0, 1)
	return r, mustCache(t, s)
}

func TestAQuorumCachesPutIsToldAndShownOnlyOnceItsPartCommitsIt(t *testing.T) {
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	w, err := c.Watch(WatchOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	told := make(chanWriter, 1)
	if err := c.PutAsync([]byte("k"), []byte("v1"), PutOptions{}, told); err != nil {
		t.Fatal(err)
	}
	values.awaitVouch(t) // the log has it: a Leader cache would have answered
	select {
	case res := <-told:
		t.Fatalf("the put was answered %+v before its part committed it", res)
	default:
	}
	got := make(chan Item, 1)
	go func() {
		it, err := c.Get([]byte("k"), nil)
		if err != nil {
			t.Error(err)
		}
		got <- it
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	if ev, err := w.Next(ctx); err == nil {
		t.Fatalf("the watch saw %+v before the part committed it", ev)
	}
	cancel()
	values.commitTo(t, 1, 1)
	if res := <-told; res.err != nil || res.w.Offset != 0 {
		t.Fatalf("the put once committed: %+v", res)
	}
	if it := <-got; !it.Found || string(it.Value) != "v1" {
		t.Fatalf("the get waiting for the commit: %+v", it)
	}
	ev, err := w.Next(testContext(t))
	if err != nil || string(ev.Value) != "v1" || ev.Offset != 0 {
		t.Fatalf("the watch once committed: %+v %v", ev, err)
	}
}

func TestAQuorumCachesPutWithoutAMajorityIsRefusedAndNotShown(t *testing.T) {
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	put := func(v string) chanWriter {
		told := make(chanWriter, 1)
		if err := c.PutAsync([]byte("k"), []byte(v), PutOptions{}, told); err != nil {
			t.Fatal(err)
		}
		values.awaitVouch(t)
		return told
	}
	told := put("v1")
	values.commitTo(t, 1, 1)
	if res := <-told; res.err != nil {
		t.Fatal(res.err)
	}
	told = put("v2")
	values.refuse(errNoMajority)
	if res := <-told; !errors.Is(res.err, wire.CodeNoQuorum) {
		t.Fatalf("the put no majority took: %+v, want no_quorum", res)
	}
	if it, err := c.Get([]byte("k"), nil); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("a get of the key whose newest write is not committed: %+v %q %v, want ErrNoQuorum", it, it.Value, err)
	}
	var pe *PreconditionError
	refused := make(chanWriter, 1)
	if err := c.PutAsync([]byte("k"), []byte("v3"), PutOptions{Cond: Condition{Kind: CondIfAbsent}}, refused); err != nil {
		t.Fatalf("a put if absent on a value not committed: %v, want its answer parked for its waiter", err)
	}
	if res := <-refused; !errors.Is(res.err, ErrNoQuorum) || errors.As(res.err, &pe) {
		t.Fatalf("a put if absent, refused on a value not committed: %+v, want ErrNoQuorum rather than the value's offset", res)
	}
	values.commitTo(t, 1, 2) // a majority after all: the refused write was stored
	if it, err := c.Get([]byte("k"), nil); err != nil || string(it.Value) != "v2" {
		t.Fatalf("the get once v2 committed: %+v %v", it, err)
	}
}

func TestAQuorumCachesCounterAddIsToldAndReadOnlyOnceCommitted(t *testing.T) {
	r, c := quorumCache(t)
	if _, err := c.CounterGet([]byte("warm")); err != nil { // the counters log opens and leads
		t.Fatal(err)
	}
	counters := r.part(t, 0, engine.PartCounters)
	told := make(chanAdder, 1)
	if err := c.CounterAddAsync([]byte("n"), 5, told); err != nil {
		t.Fatal(err)
	}
	counters.awaitVouch(t)
	select {
	case err := <-told:
		t.Fatalf("the add was answered (%v) before its part committed it", err)
	default:
	}
	got := counterGetAsync(t, c, "n")
	counters.awaitVouch(t) // the get waits for the add its sum holds
	select {
	case v := <-got:
		t.Fatalf("the get answered %+v before the add committed", v)
	default:
	}
	counters.commitTo(t, 1, 1)
	if err := <-told; err != nil {
		t.Fatal(err)
	}
	if v := <-got; v.Sum != 5 {
		t.Fatalf("the get once committed: %+v", v)
	}
}

// A Leader cache on the same fake answers at once, as it always did.
func TestALeaderCachesPutIsToldOnceItsLogHasIt(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	r.leads(0, 1)
	if _, err := c.Put([]byte("k"), []byte("v"), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if it, err := c.Get([]byte("k"), nil); err != nil || string(it.Value) != "v" {
		t.Fatalf("%+v %v", it, err)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A Quorum counter get waiting for its add's vouch holds no lock the
// counters log's committer takes: a later add is still appended, made
// visible and handed to its part (the get once held visMu across the
// wait, so the committer's onVisible stalled until the vouch came).
func TestAQuorumCounterGetWaitingForItsAddStallsNoLaterAdd(t *testing.T) {
	r, c := quorumCache(t)
	if _, err := c.CounterGet([]byte("warm")); err != nil { // the counters log opens and leads
		t.Fatal(err)
	}
	counters := r.part(t, 0, engine.PartCounters)
	t.Cleanup(func() { counters.refuse(errNoMajority) }) // before the store closes: a failed run lets the get go
	first := make(chanAdder, 1)
	if err := c.CounterAddAsync([]byte("n"), 5, first); err != nil {
		t.Fatal(err)
	}
	counters.awaitVouch(t)
	got := counterGetAsync(t, c, "n")
	counters.awaitVouch(t) // the get waits for the add its sum holds
	second := make(chanAdder, 1)
	if err := c.CounterAddAsync([]byte("m"), 2, second); err != nil {
		t.Fatal(err)
	}
	counters.awaitVouch(t) // the committer published the second add despite the waiting get
	counters.commitTo(t, 1, 2)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if v := <-got; v.Sum != 5 {
		t.Fatalf("the get once committed: %+v", v)
	}
}

// counterGetAsync runs a CounterGet of key on its own goroutine; its value
// comes on the channel (an error fails the test).
func counterGetAsync(t *testing.T, c *Cache, key string) <-chan CounterValue {
	got := make(chan CounterValue, 1)
	go func() {
		v, err := c.CounterGet([]byte(key))
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	return got
}

// A Quorum cache's get of a key whose delete is not committed does not
// answer "absent": the delete took the key out of the index at once, and
// a failover could take it back, the key's value then showing again (the
// simulator's seed 2105: a get at a leader cut off from its followers
// answered absent, and after the failover the value was back). It waits
// for the delete's commit, and without one answers no_quorum.
func TestAQuorumCachesGetDoesNotShowADeleteBeforeItCommits(t *testing.T) {
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	told := make(chanWriter, 1)
	if err := c.PutAsync([]byte("k"), []byte("v1"), PutOptions{}, told); err != nil {
		t.Fatal(err)
	}
	values.awaitVouch(t)
	values.commitTo(t, 1, 1)
	if res := <-told; res.err != nil {
		t.Fatalf("the put: %v", res.err)
	}
	if err := c.DeleteAsync([]byte("k"), Condition{}, told); err != nil {
		t.Fatal(err)
	}
	values.awaitVouch(t) // the log has the delete; no majority yet
	if it, err := c.Get([]byte("k"), nil); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("a get before the delete committed: %+v, %v; want no_quorum", it, err)
	}
	values.commitTo(t, 1, 2)
	if res := <-told; res.err != nil || !res.w.Existed {
		t.Fatalf("the delete once committed: %+v", res)
	}
	if it, err := c.Get([]byte("k"), nil); err != nil || it.Found {
		t.Fatalf("a get once the delete committed: %+v, %v", it, err)
	}
}
