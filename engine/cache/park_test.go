package cache

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// Parked reads (park.go): a read of a Quorum cache that must wait for a
// commit never waits on its caller through the async calls; its waiter is
// told when to ask again, or its answer.

// chanReady is a ReadWaiter that sends what it is told.
type chanReady chan error

func (c chanReady) CacheReadReady(err error) { c <- err }

// chanCounter is a CounterReader that sends what it is told.
type chanCounter chan counterResult

type counterResult struct {
	v   CounterValue
	err error
}

func (c chanCounter) CounterRead(v CounterValue, err error) { c <- counterResult{v, err} }

// toldNow is what ch was told within ten seconds, or fails the test.
func toldNow[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: never told", what)
	}
	var zero T
	return zero
}

// notTold fails the test if ch holds anything now.
func notTold[T any](t *testing.T, ch chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s: told %+v, want it still parked", what, v)
	default:
	}
}

// uncommittedPut puts k=v on a Quorum cache and waits until its log has it
// (the part is asked to vouch), uncommitted; it returns the put's answer.
func uncommittedPut(t *testing.T, c *Cache, values *fakePart, k, v string) chanWriter {
	t.Helper()
	w := make(chanWriter, 1)
	if err := c.PutAsync([]byte(k), []byte(v), PutOptions{}, w); err != nil {
		t.Fatal(err)
	}
	values.awaitVouch(t)
	return w
}

func TestAGetAsyncOfAKeyWithAnUncommittedWriteParksAndIsToldOnceItCommits(t *testing.T) {
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	other := uncommittedPut(t, c, values, "other", "x")
	values.commitTo(t, 1, 1)
	toldNow(t, other, "the put of other")
	uncommittedPut(t, c, values, "k", "v")

	if _, wait, err := c.GetAsync([]byte("k"), nil, nil); err != nil || !wait {
		t.Fatalf("a get without a record of its own: wait %v, %v; want it handed back", wait, err)
	}
	ready := make(chanReady, 1)
	var rw ReadWait
	rw.Begin(ready)
	if it, wait, err := c.GetAsync([]byte("k"), nil, &rw); err != nil || !wait {
		t.Fatalf("the get of k: %+v wait %v %v, want it parked", it, wait, err)
	}
	if it, wait, err := c.GetAsync([]byte("other"), nil, nil); err != nil || wait || string(it.Value) != "x" {
		t.Fatalf("a get of a committed key while k's is parked: %+v wait %v %v", it, wait, err)
	}
	notTold(t, ready, "the parked get before the commit")
	values.commitTo(t, 1, 2)
	if err := toldNow(t, ready, "the parked get"); err != nil {
		t.Fatalf("the parked get once its write committed: %v", err)
	}
	if it, wait, err := c.GetAsync([]byte("k"), nil, &rw); err != nil || wait || string(it.Value) != "v" {
		t.Fatalf("the get asked again: %+v wait %v %v", it, wait, err)
	}
}

func TestAParkedGetIsAnsweredNoQuorumAtItsDeadline(t *testing.T) {
	r, c := quorumCache(t) // QuorumTimeout 50 ms
	values := r.part(t, 0, engine.PartCacheValues)
	uncommittedPut(t, c, values, "k", "v")
	ready := make(chanReady, 1)
	var rw ReadWait
	rw.Begin(ready)
	if _, wait, err := c.GetAsync([]byte("k"), nil, &rw); err != nil || !wait {
		t.Fatalf("wait %v %v, want parked", wait, err)
	}
	if err := toldNow(t, ready, "the parked get"); !errors.Is(err, ErrNoQuorum) || !errors.Is(err, wire.CodeNoQuorum) {
		t.Fatalf("the parked get past its deadline: %v, want ErrNoQuorum", err)
	}
	if _, _, err := c.GetAsync([]byte("k"), nil, &rw); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("asked again past its deadline: %v, want ErrNoQuorum at once", err)
	}
}

func TestAParkedGetIsToldNotLeaderWhenItsLeadershipEnds(t *testing.T) {
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	uncommittedPut(t, c, values, "k", "v")
	c.store.opts.QuorumTimeout = time.Hour // only the leadership's end can answer it
	ready := make(chanReady, 1)
	var rw ReadWait
	rw.Begin(ready)
	if _, wait, err := c.GetAsync([]byte("k"), nil, &rw); err != nil || !wait {
		t.Fatalf("wait %v %v, want parked", wait, err)
	}
	r.follows(0, 2)
	if err := toldNow(t, ready, "the parked get"); !errors.Is(err, engine.ErrNotLeader) {
		t.Fatalf("the parked get once its shard follows: %v, want not_leader", err)
	}
}

func TestAParkedGetIsToldTheStopOfItsShard(t *testing.T) {
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	uncommittedPut(t, c, values, "k", "v")
	c.store.opts.QuorumTimeout = time.Hour
	ready := make(chanReady, 1)
	var rw ReadWait
	rw.Begin(ready)
	if _, wait, err := c.GetAsync([]byte("k"), nil, &rw); err != nil || !wait {
		t.Fatalf("wait %v %v, want parked", wait, err)
	}
	c.store.Close()
	if err := toldNow(t, ready, "the parked get"); !errors.Is(err, ErrClosed) {
		t.Fatalf("the parked get once the store closed: %v, want ErrClosed", err)
	}
}

// A refused condition and a delete of a key with no value say what the
// index holds: with a write before them uncommitted, their answers are
// told to their waiters once it commits, never on the caller.
func TestARefusedConditionAndADeleteOfNothingAreToldOnceWhatCameBeforeCommits(t *testing.T) {
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	first := uncommittedPut(t, c, values, "k", "v")
	refused := make(chanWriter, 1)
	if err := c.PutAsync([]byte("k"), []byte("w"), PutOptions{Cond: Condition{Kind: CondIfAbsent}}, refused); err != nil {
		t.Fatalf("a put if absent over an uncommitted value: %v, want its refusal parked", err)
	}
	nothing := make(chanWriter, 1)
	if err := c.DeleteAsync([]byte("absent"), Condition{}, nothing); err != nil {
		t.Fatalf("a delete of a key with no value behind an uncommitted write: %v, want its answer parked", err)
	}
	notTold(t, refused, "the refused condition")
	notTold(t, nothing, "the delete of nothing")
	values.commitTo(t, 1, 1)
	if res := toldNow(t, first, "the put"); res.err != nil {
		t.Fatal(res.err)
	}
	var pe *PreconditionError
	if res := toldNow(t, refused, "the refused condition"); !errors.As(res.err, &pe) || pe.Current != 0 {
		t.Fatalf("the refused condition once committed: %+v, want a precondition failure naming offset 0", res)
	}
	if res := toldNow(t, nothing, "the delete of nothing"); res.err != nil || res.w.Offset != -1 || res.w.Existed {
		t.Fatalf("the delete of nothing once committed: %+v", res)
	}
	// With nothing uncommitted both are answered as they always were.
	if err := c.PutAsync([]byte("k"), []byte("w"), PutOptions{Cond: Condition{Kind: CondIfAbsent}}, refused); !errors.As(err, &pe) {
		t.Fatalf("a put if absent over a committed value: %v, want the refusal at once", err)
	}
	if err := c.DeleteAsync([]byte("absent"), Condition{}, nothing); err != nil {
		t.Fatal(err)
	}
	if res := toldNow(t, nothing, "the second delete of nothing"); res.err != nil || res.w.Offset != -1 {
		t.Fatalf("%+v", res)
	}
}

func TestACounterGetAsyncParksUntilItsAddIsVouchedFor(t *testing.T) {
	r, c := quorumCache(t)
	if _, err := c.CounterGet([]byte("warm")); err != nil {
		t.Fatal(err)
	}
	counters := r.part(t, 0, engine.PartCounters)
	added := make(chanAdder, 1)
	if err := c.CounterAddAsync([]byte("n"), 5, added); err != nil {
		t.Fatal(err)
	}
	counters.awaitVouch(t)
	got := make(chanCounter, 1)
	if v, wait, err := c.CounterGetAsync([]byte("n"), got); err != nil || !wait {
		t.Fatalf("a counter get of an uncommitted add: %+v wait %v %v, want it parked", v, wait, err)
	}
	counters.awaitVouch(t)
	notTold(t, got, "the parked counter get")
	counters.commitTo(t, 1, 1)
	if err := toldNow(t, added, "the add"); err != nil {
		t.Fatal(err)
	}
	if res := toldNow(t, got, "the counter get"); res.err != nil || res.v.Sum != 5 {
		t.Fatalf("the counter get once committed: %+v", res)
	}
	if v, wait, err := c.CounterGetAsync([]byte("n"), got); err != nil || wait || v.Sum != 5 {
		t.Fatalf("a counter get once committed: %+v wait %v %v, want it answered at once", v, wait, err)
	}
}

// A shard parks at most parkedReadsMax reads: one more is refused
// overloaded, and once the first are told a read parks again.
func TestAShardParksABoundedNumberOfReads(t *testing.T) {
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	uncommittedPut(t, c, values, "k", "v")
	c.store.opts.QuorumTimeout = time.Hour
	ready := make(chanReady, parkedReadsMax+1)
	rws := make([]ReadWait, parkedReadsMax+1)
	for i := range parkedReadsMax {
		rws[i].Begin(ready)
		if _, wait, err := c.GetAsync([]byte("k"), nil, &rws[i]); err != nil || !wait {
			t.Fatalf("read %d: wait %v %v, want parked", i, wait, err)
		}
	}
	last := &rws[parkedReadsMax]
	last.Begin(ready)
	if _, _, err := c.GetAsync([]byte("k"), nil, last); !errors.Is(err, ErrReadsParkedFull) || !errors.Is(err, wire.CodeOverloaded) {
		t.Fatalf("read %d: %v, want ErrReadsParkedFull (overloaded)", parkedReadsMax, err)
	}
	values.commitTo(t, 1, 1)
	for i := range parkedReadsMax {
		if err := toldNow(t, ready, fmt.Sprint("read ", i)); err != nil {
			t.Fatal(err)
		}
	}
	if it, wait, err := c.GetAsync([]byte("k"), nil, last); err != nil || wait || string(it.Value) != "v" {
		t.Fatalf("the refused read asked again: %+v wait %v %v", it, wait, err)
	}
}

// A get of a Quorum cache with nothing uncommitted allocates nothing, as
// on any cache, whether it is handed a record or not.
func TestAQuorumGetOfACommittedKeyAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r, c := quorumCache(t)
	values := r.part(t, 0, engine.PartCacheValues)
	w := uncommittedPut(t, c, values, "k", "v")
	values.commitTo(t, 1, 1)
	toldNow(t, w, "the put")
	dst := make([]byte, 0, 64)
	var rw ReadWait
	rw.Begin(make(chanReady, 1))
	for name, rw := range map[string]*ReadWait{"no record": nil, "a record": &rw} {
		if a := testing.AllocsPerRun(1000, func() {
			if it, wait, err := c.GetAsync([]byte("k"), dst[:0], rw); err != nil || wait || !it.Found {
				t.Fatal(it, wait, err)
			}
		}); a > 0 {
			t.Errorf("%s: %.2f allocations a get", name, a)
		}
	}
}
