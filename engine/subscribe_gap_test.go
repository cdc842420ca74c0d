package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// commitReplication serves each replicated shard from its local log and
// keeps the OnCommit the engine gave it, which the test calls itself: a
// replication that hands committed records over as the test says.
type commitReplication struct {
	onCommit func(first, next int64, records []byte)
}

func (c *commitReplication) Replicate(r ReplicaLog) (ReplicatedLog, error) {
	c.onCommit = r.OnCommit
	return r.Log, nil
}

// A live subscription handed records that do not follow on from its next
// offset (a replicated shard whose leadership left this broker and came
// back: the new leadership hands over from its own commit on, and what was
// committed meanwhile never came through) reads what it missed from the
// log, in order, and goes live again: no offset is skipped (seed 146 of
// the simulator, a subscriber that stayed at its broker across two
// failovers, skipped 63 committed records).
func TestALiveSubscriptionReadsAGapInWhatIsHandedOverFromTheLog(t *testing.T) {
	c := &commitReplication{}
	s, sh := replicatedTestShard(t, c)
	sub, err := sh.Subscribe(SubscribeOptions{Start: StartLatest})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var recs []Record
	for _, v := range []string{"a", "b", "c", "d", "e", "f"} {
		recs = append(recs, Record{Value: []byte(v)})
	}
	publish(t, s, recs...)
	all, _, err := sh.Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	framed := func(from, to int64) []byte { // the records [from, to) as the log frames them
		var out []byte
		it := segment.NewIter(all)
		for at := it.Pos(); ; at = it.Pos() {
			r, ok := it.Next()
			if !ok {
				return out
			}
			if r.Offset >= from && r.Offset < to {
				out = append(out, all[at:at+r.Size()]...)
			}
		}
	}
	c.onCommit(0, 2, framed(0, 2)) // the first leadership here
	c.onCommit(4, 5, framed(4, 5)) // a later one, from its commit: 2 and 3 were committed elsewhere
	c.onCommit(5, 6, framed(5, 6))
	var got []string
	for len(got) < len(recs) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		buf, err := sub.Next(ctx, nil, 1<<20)
		cancel()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		for it := segment.NewIter(buf); ; {
			r, ok := it.Next()
			if !ok {
				break
			}
			got = append(got, string(r.Value))
			if want := string(recs[r.Offset].Value); int64(len(got)-1) != r.Offset || string(r.Value) != want {
				t.Fatalf("delivered %q, offset %d after %d records", got, r.Offset, len(got)-1)
			}
		}
	}
	publish(t, s, Record{Value: []byte("g")})
	c.onCommit(6, 7, func() []byte { all, _, _ = sh.Read(0, 1<<20, nil); return framed(6, 7) }())
	if r, ok := firstDelivered(t, sub); !ok || r.Offset != 6 || string(r.Value) != "g" {
		t.Fatalf("live again: got %v %v", r, ok)
	}
	if st := sub.Stats(); st.Dropped != 0 || st.Delivered != 7 {
		t.Fatalf("stats %+v", st)
	}
}

// endLog is a replicated shard's log whose end the test lowers, as a
// broker's end of a shard falls to its known commit when its leadership
// there ends: reads stop there too.
type endLog struct {
	*shardlog.Log
	end atomic.Int64 // -1: the log's own
}

func (l *endLog) End() int64 {
	if e := l.end.Load(); e >= 0 {
		return e
	}
	return l.Log.End()
}

func (l *endLog) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	if e := l.end.Load(); e >= 0 && from >= e {
		return dst, from, nil
	}
	return l.Log.Read(from, maxBytes, dst)
}

type endReplication struct {
	log      *endLog
	onCommit func(first, next int64, records []byte)
}

func (r *endReplication) Replicate(rl ReplicaLog) (ReplicatedLog, error) {
	r.log = &endLog{Log: rl.Log}
	r.log.end.Store(-1)
	r.onCommit = rl.OnCommit
	return r.log, nil
}

// A subscription not live yet whose shard's end falls below its offset (a
// replicated shard whose leadership on this broker ended before the
// subscription caught up: the end is then the replica's known commit)
// waits, rather than reading nothing in a loop for ever (seed 1898 of the
// simulator hung so), and delivers from its offset once records come.
func TestASubscriptionPastItsShardsEndWaits(t *testing.T) {
	r := &endReplication{}
	s, sh := replicatedTestShard(t, r)
	publish(t, s, Record{Value: []byte("a")}, Record{Value: []byte("b")}, Record{Value: []byte("c")})
	sub, err := sh.Subscribe(SubscribeOptions{Start: StartOffset, Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r.log.end.Store(1) // the leadership ended before the subscription caught up
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := sub.Next(ctx, nil, 1<<20)
		done <- err
	}()
	select {
	case err := <-done:
		if err != context.DeadlineExceeded {
			t.Fatalf("Next past the end: %v, want it to wait", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next past the shard's end never returned: it reads nothing in a loop")
	}
	r.log.end.Store(-1) // leading again
	publish(t, s, Record{Value: []byte("d")})
	all, _, err := sh.Read(3, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.onCommit(3, 4, all)
	if rec, ok := firstDelivered(t, sub); !ok || rec.Offset != 3 || string(rec.Value) != "d" {
		t.Fatalf("got %v %v, want offset 3 %q", rec, ok, "d")
	}
}

// replicatedTestShard opens an engine on a MemFS with rep as its
// replication (closed with the test), creates sid at replication factor 3
// and returns the stream and its shard 0.
func replicatedTestShard(t *testing.T, rep Replication) (*Stream, *Shard) {
	t.Helper()
	e, err := Open(Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.OnCommit(), Replication: rep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.CreateStream(sid, StreamConfig{Durable: true, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	return s, sh
}

// firstDelivered is the first record of sub's next delivery, waited for
// at most 2 s.
func firstDelivered(t *testing.T, sub *Subscription) (segment.Record, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	buf, err := sub.Next(ctx, nil, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	it := segment.NewIter(buf)
	return it.Next()
}
