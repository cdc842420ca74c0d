package engine

import (
	"context"
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
	e, err := Open(Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.OnCommit(), Replication: c})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateStream(sid, StreamConfig{Durable: true, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	buf, err := sub.Next(ctx, nil, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	it := segment.NewIter(buf)
	if r, ok := it.Next(); !ok || r.Offset != 6 || string(r.Value) != "g" {
		t.Fatalf("live again: got %v %v", r, ok)
	}
	if st := sub.Stats(); st.Dropped != 0 || st.Delivered != 7 {
		t.Fatalf("stats %+v", st)
	}
}
