package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// appendControl appends a control record (as a Quorum leadership's
// generation start) straight to a durable shard's log.
func appendControl(t *testing.T, sh *Shard) int64 {
	t.Helper()
	off, err := sh.log.(*diskLog).current().AppendWait([]Record{{Flags: segment.FlagControl | segment.FlagGenerationStart}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// nextErr reads until the subscription ends, within a deadline, and
// returns the offsets it handed over and how it ended.
func nextErr(t *testing.T, sub *Subscription) ([]int64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var offs []int64
	for {
		buf, err := sub.Next(ctx, nil, 4096)
		it := segment.NewIter(buf)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			offs = append(offs, r.Offset)
		}
		if err != nil {
			return offs, err
		}
	}
}

// A subscription until its end stops at the shard's end as it registered,
// though the last offset below it is a control record no reader sees, and
// delivers nothing published after.
func TestASubscriptionUntilItsEndStopsThereThoughAControlRecordEndsTheLog(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	for i := range 5 {
		publish(t, s, rec("", i))
	}
	if off := appendControl(t, sh); off != 5 {
		t.Fatalf("control record at %d", off)
	}
	sub, err := sh.Subscribe(SubscribeOptions{Start: StartEarliest, UntilEnd: true, End: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if end, ok := sub.EndOffset(); !ok || end != 6 {
		t.Fatalf("end %d %v, want 6", end, ok)
	}
	publish(t, s, rec("", 6))
	offs, err := nextErr(t, sub)
	if !errors.Is(err, ErrEndReached) || len(offs) != 5 || offs[4] != 4 {
		t.Fatalf("delivered %v and ended with %v; want 0..4 and the end", offs, err)
	}
	latest, _ := sh.Subscribe(SubscribeOptions{Start: StartLatest, UntilEnd: true, End: -1})
	defer latest.Close()
	if offs, err := nextErr(t, latest); !errors.Is(err, ErrEndReached) || len(offs) != 0 {
		t.Fatalf("from latest: %v, %v; want the end at once", offs, err)
	}
}

// An end given beyond the shard's end (a subscription opened again after
// a failover keeps its first end) is reached live, a control record
// included, and records past it are not delivered.
func TestAGivenEndIsReachedLivePastAControlRecord(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	publish(t, s, rec("", 0))
	sub, err := sh.Subscribe(SubscribeOptions{Start: StartLatest, UntilEnd: true, End: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	publish(t, s, rec("", 1))
	appendControl(t, sh) // offset 2, the last below the end
	publish(t, s, rec("", 3))
	offs, err := nextErr(t, sub)
	if !errors.Is(err, ErrEndReached) || len(offs) != 1 || offs[0] != 1 {
		t.Fatalf("delivered %v and ended with %v; want offset 1 and the end", offs, err)
	}
}

// A subscription by time starts at the first record at or after it, on a
// durable shard and on one in memory; a time past every record starts at
// the end.
func TestASubscriptionByTimeStartsAtTheFirstRecordAtOrAfterIt(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	for _, durable := range []bool{true, false} {
		id := sid
		if !durable {
			id.Name = "in-memory"
		}
		e.CreateStream(id, StreamConfig{Durable: durable})
		s, _ := e.Stream(id)
		sh, _ := s.Shard(0)
		for i := range 100 {
			r := rec("", i)
			r.Timestamp = int64(1000 + 10*i)
			publish(t, s, r)
		}
		for ts, want := range map[int64]int64{0: 0, 1000: 0, 1001: 1, 1500: 50, 1990: 99, 1991: 100} {
			sub, err := sh.Subscribe(SubscribeOptions{Start: StartTime, Time: ts})
			if err != nil {
				t.Fatal(err)
			}
			if sub.First() != want {
				t.Errorf("durable %v: from time %d started at %d, want %d", durable, ts, sub.First(), want)
			}
			sub.Close()
		}
		u, err := sh.Usage()
		if err != nil || u.FirstTime != 1000 || u.LastTime != 1990 || u.Bytes == 0 {
			t.Errorf("durable %v: usage %+v, %v; want times 1000..1990 and its bytes", durable, u, err)
		}
	}
}
