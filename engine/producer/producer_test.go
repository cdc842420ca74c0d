package producer

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// A batch whose acknowledgement was lost is sent again: the leader answers
// from memory with the offsets the first copy got, and the shard holds it
// once.
func TestAReSentBatchLandsOnce(t *testing.T) {
	f := newFixture(t, 1, Options{})
	defer f.close()
	id := f.register()
	first := f.send(id, 0, 0, batchOf("a", 3))
	second := f.send(id, 0, 1, batchOf("b", 2))
	again := f.send(id, 0, 0, batchOf("a", 3))
	if first.Duplicate || !again.Duplicate || again.First != first.First || again.Count != 3 || again.Seq != 0 {
		t.Fatalf("first %+v, re-sent %+v", first, again)
	}
	if again1 := f.send(id, 0, 1, batchOf("b", 2)); again1.First != second.First || !again1.Duplicate {
		t.Fatalf("second %+v, re-sent %+v", second, again1)
	}
	want := []string{"a-0", "a-1", "a-2", "b-0", "b-1"}
	if got := f.records(0); !slices.Equal(got, want) {
		t.Fatalf("shard holds %q, want %q", got, want)
	}
	if st := f.m.Stats(); st.Duplicates != 2 || st.Batches != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// A batch that skips a sequence is refused, naming the sequence expected,
// and nothing of it lands.
func TestAGapIsRefusedWithTheExpectedSequence(t *testing.T) {
	f := newFixture(t, 1, Options{})
	defer f.close()
	id := f.register()
	if err := f.m.Publish(id, f.stream, 0, 1, batchOf("x", 1), newAckWaiter()); !isGap(err, 1, 0) {
		t.Fatalf("first batch numbered 1: %v", err)
	}
	f.send(id, 0, 0, batchOf("a", 1))
	f.send(id, 0, 1, batchOf("b", 1))
	err := f.m.Publish(id, f.stream, 0, 5, batchOf("x", 1), newAckWaiter())
	if !isGap(err, 5, 2) {
		t.Fatalf("batch 5 after 1: %v", err)
	}
	if got := f.records(0); !slices.Equal(got, []string{"a-0", "b-0"}) {
		t.Fatalf("shard holds %q", got)
	}
	f.send(id, 0, 2, batchOf("c", 1)) // the expected one is still accepted
}

func isGap(err error, got, expected uint64) bool {
	var se *SequenceError
	return errors.Is(err, ErrSequenceGap) && errors.As(err, &se) && se.Got == got && se.Expected == expected
}

// Many copies of one batch arrive at once, while the first is still being
// written: one appends, every other is told the same offsets.
func TestRacingReSendsAppendOnce(t *testing.T) {
	f := newFixture(t, 1, Options{})
	defer f.close()
	id := f.register()
	const copies, batches = 16, 20
	for seq := range uint64(batches) {
		f.fs.hold()
		waiters := make([]*ackWaiter, copies)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for c := range waiters {
			waiters[c] = newAckWaiter()
			wg.Go(func() {
				<-start
				if err := f.m.Publish(id, f.stream, 0, seq, batchOf(fmt.Sprint("s", seq), 4), waiters[c]); err != nil {
					t.Errorf("copy %d of batch %d: %v", c, seq, err)
				}
			})
		}
		close(start)
		wg.Wait()
		f.fs.release()
		originals := 0
		for _, w := range waiters {
			a, err := w.wait(t)
			if err != nil || a.First != int64(4*seq) || a.Count != 4 {
				t.Fatalf("batch %d: %+v %v", seq, a, err)
			}
			if !a.Duplicate {
				originals++
			}
		}
		if originals != 1 {
			t.Fatalf("batch %d appended by %d copies", seq, originals)
		}
	}
	if got := len(f.records(0)); got != 4*batches {
		t.Fatalf("shard holds %d records, want %d", got, 4*batches)
	}
}

// A re-send that arrives while the original is unacknowledged waits for
// it, and is told nothing before.
func TestAReSendOfAPendingBatchWaitsForTheOriginal(t *testing.T) {
	f := newFixture(t, 1, Options{})
	defer f.close()
	id := f.register()
	f.fs.hold()
	orig, dup := newAckWaiter(), newAckWaiter()
	if err := f.m.Publish(id, f.stream, 0, 0, batchOf("a", 2), orig); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Publish(id, f.stream, 0, 0, batchOf("a", 2), dup); err != nil {
		t.Fatal(err)
	}
	if orig.told() || dup.told() {
		t.Fatal("told before the batch was written")
	}
	f.fs.release()
	a, _ := orig.wait(t)
	d, _ := dup.wait(t)
	if a.Duplicate || !d.Duplicate || a.First != d.First {
		t.Fatalf("original %+v, re-send %+v", a, d)
	}
}

// At most InFlightMax batches may wait for their acknowledgement; the
// broker remembers exactly those, so older sequences are stale.
func TestInFlightIsBoundedAndOlderSequencesAreStale(t *testing.T) {
	f := newFixture(t, 1, Options{InFlightMax: 2})
	defer f.close()
	id := f.register()
	f.fs.hold()
	w0, w1 := newAckWaiter(), newAckWaiter()
	f.m.Publish(id, f.stream, 0, 0, batchOf("a", 1), w0)
	f.m.Publish(id, f.stream, 0, 1, batchOf("b", 1), w1)
	if err := f.m.Publish(id, f.stream, 0, 2, batchOf("c", 1), newAckWaiter()); !errors.Is(err, ErrTooManyInFlight) {
		t.Fatalf("third in flight: %v", err)
	}
	f.fs.release()
	w0.wait(t)
	w1.wait(t)
	f.send(id, 0, 2, batchOf("c", 1))
	f.send(id, 0, 3, batchOf("d", 1))
	if err := f.m.Publish(id, f.stream, 0, 1, batchOf("b", 1), newAckWaiter()); !errors.Is(err, ErrSequenceStale) {
		t.Fatalf("re-send of batch 1 after 3: %v", err)
	}
	if d := f.send(id, 0, 2, batchOf("c", 1)); !d.Duplicate || d.First != 2 {
		t.Fatalf("re-send of batch 2: %+v", d)
	}
	if got := len(f.records(0)); got != 4 {
		t.Fatalf("shard holds %d records", got)
	}
}

// Sequences count per shard, and a batch must hold only records its shard
// owns.
func TestSequencesArePerShard(t *testing.T) {
	f := newFixture(t, 4, Options{})
	defer f.close()
	id := f.register()
	keyFor := func(shard int) []byte {
		for i := 0; ; i++ {
			k := fmt.Appendf(nil, "k%d", i)
			if f.stream.ShardFor(k) == shard {
				return k
			}
		}
	}
	for shard := range 4 {
		for seq := range uint64(3) {
			a := f.send(id, shard, seq, []engine.Record{{Key: keyFor(shard), Value: []byte("v")}})
			if a.First != int64(seq) {
				t.Fatalf("shard %d batch %d at %d", shard, seq, a.First)
			}
		}
	}
	wrong := []engine.Record{{Key: keyFor(1), Value: []byte("v")}}
	if err := f.m.Publish(id, f.stream, 0, 3, wrong, newAckWaiter()); !errors.Is(err, engine.ErrWrongShard) {
		t.Fatalf("record of shard 1 sent to shard 0: %v", err)
	}
	f.send(id, 0, 3, []engine.Record{{Key: keyFor(0), Value: []byte("v")}}) // the refusal used no sequence
}

// An idle producer is forgotten after IdleTimeout, and is then unknown:
// its batch is reported, not landed.
func TestAnIdleProducerExpiresAndIsThenUnknown(t *testing.T) {
	f := newFixture(t, 1, Options{IdleTimeout: time.Minute})
	defer f.close()
	idle, busy := f.register(), f.register()
	f.send(idle, 0, 0, batchOf("a", 1))
	for seq := range uint64(4) {
		f.now.advance(20 * time.Second)
		f.send(busy, 0, seq, batchOf("b", 1))
	}
	if err := f.m.Publish(idle, f.stream, 0, 1, batchOf("a", 1), newAckWaiter()); !errors.Is(err, ErrProducerUnknown) {
		t.Fatalf("idle producer: %v", err)
	}
	if n := f.m.ExpireIdle(); n != 1 || f.m.Producers() != 1 {
		t.Fatalf("expired %d, %d left", n, f.m.Producers())
	}
	f.send(busy, 0, 4, batchOf("b", 1))
	if got := len(f.records(0)); got != 6 {
		t.Fatalf("shard holds %d records", got)
	}
	if st := f.m.Stats(); st.Expired != 1 || st.Unknown != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Register refuses beyond ProducersMax, after forgetting idle ones.
func TestRegisterIsBounded(t *testing.T) {
	f := newFixture(t, 1, Options{ProducersMax: 2, IdleTimeout: time.Minute})
	defer f.close()
	f.register()
	f.register()
	if _, err := f.m.Register(); !errors.Is(err, ErrTooManyProducers) {
		t.Fatalf("third producer: %v", err)
	}
	f.now.advance(time.Minute)
	if _, err := f.m.Register(); err != nil {
		t.Fatalf("after the others idled: %v", err)
	}
}

// A broker that restarted does not know the producers of its previous
// incarnation, even one whose number it issues again.
func TestARestartedBrokerDoesNotKnowTheProducer(t *testing.T) {
	f := newFixture(t, 1, Options{})
	defer func() { f.close() }()
	old := f.register()
	f.send(old, 0, 0, batchOf("a", 1))
	f.restart(Options{})
	fresh := f.register()
	if fresh.Producer != old.Producer || fresh.Epoch == old.Epoch {
		t.Fatalf("old %+v, fresh %+v", old, fresh)
	}
	for _, seq := range []uint64{0, 1} {
		if err := f.m.Publish(old, f.stream, 0, seq, batchOf("a", 1), newAckWaiter()); !errors.Is(err, ErrProducerUnknown) {
			t.Fatalf("batch %d of the old producer: %v", seq, err)
		}
	}
	f.send(fresh, 0, 0, batchOf("b", 1))
	if got := f.records(0); !slices.Equal(got, []string{"a-0", "b-0"}) {
		t.Fatalf("shard holds %q", got)
	}
}

// A broker that does not lead the shard says so before anything else, and
// one that led it and lost it forgets its producers there.
func TestANonLeaderNamesTheLeaderAndAFormerLeaderForgets(t *testing.T) {
	own := &switchOwner{local: true}
	f := newFixture(t, 1, Options{})
	defer f.close()
	f.eng.Close()
	e, err := engine.Open(engine.Options{FS: f.fs, Dir: "/data", Owner: own})
	if err != nil {
		t.Fatal(err)
	}
	f.eng = e
	f.stream, _ = e.Stream(sid)
	f.m = New(e, Options{Now: f.now.Now})
	id := f.register()
	f.send(id, 0, 0, batchOf("a", 1))
	own.set(false)
	var nl *engine.NotLeaderError
	if err := f.m.Publish(id, f.stream, 0, 0, batchOf("a", 1), newAckWaiter()); !errors.As(err, &nl) || nl.Leader != "b2:7000" {
		t.Fatalf("re-send to a non-leader: %v", err)
	}
	f.m.ForgetShard(f.stream, 0)
	own.set(true)
	for _, seq := range []uint64{0, 1} {
		if err := f.m.Publish(id, f.stream, 0, seq, batchOf("a", 1), newAckWaiter()); !errors.Is(err, ErrProducerUnknown) {
			t.Fatalf("batch %d after leading again: %v", seq, err)
		}
	}
}

type switchOwner struct {
	mu    sync.Mutex
	local bool
}

func (o *switchOwner) set(local bool) {
	o.mu.Lock()
	o.local = local
	o.mu.Unlock()
}

func (o *switchOwner) Leader(engine.StreamID, int) (bool, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.local {
		return true, ""
	}
	return false, "b2:7000"
}

// Steady-state idempotent publishing allocates nothing.
func TestIdempotentPublishAllocatesNothing(t *testing.T) {
	e, _ := engine.Open(engine.Options{})
	defer e.Close()
	e.CreateStream(sid, engine.StreamConfig{})
	s, _ := e.Stream(sid)
	m := New(e, Options{})
	id, _ := m.Register()
	recs := batchOf("x", 8)
	w := &countWaiter{}
	seq := uint64(0)
	for ; seq < 100; seq++ {
		m.Publish(id, s, 0, seq, recs, w)
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	allocs := testing.AllocsPerRun(500, func() {
		if err := m.Publish(id, s, 0, seq, recs, w); err != nil {
			t.Fatal(err)
		}
		seq++
	})
	if allocs > 0 {
		t.Fatalf("%.1f allocations per publish", allocs)
	}
}

type countWaiter struct{ n int }

func (c *countWaiter) Acked(Ack, error) { c.n++ }

// A batch the log fails leaves the producer unknown on that shard: its
// re-send is reported, never answered as landed nor appended again.
func TestAFailedBatchMakesTheProducerUnknownThere(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem())
	e, err := engine.Open(engine.Options{FS: efs, Dir: "/data", Fsync: shardlog.OnCommit()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.CreateStream(sid, engine.StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	m := New(e, Options{})
	id, _ := m.Register()
	efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: ".seg", Nth: 1})
	efs.Inject(errorfs.Rule{Op: errorfs.Write, PathContains: ".seg", Nth: 1})
	w := newAckWaiter()
	if err := m.Publish(id, s, 0, 0, batchOf("a", 1), w); err != nil {
		t.Fatal(err)
	}
	if _, err := w.wait(t); err == nil {
		t.Fatal("the failed write was acknowledged")
	}
	for _, seq := range []uint64{0, 1} {
		if err := m.Publish(id, s, 0, seq, batchOf("a", 1), newAckWaiter()); !errors.Is(err, ErrProducerUnknown) {
			t.Fatalf("batch %d after the failure: %v", seq, err)
		}
	}
}
