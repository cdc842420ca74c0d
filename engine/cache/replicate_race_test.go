package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// Writers racing leadership changes: the shard leads, follows (its
// replica appending another leader's record at a higher generation while
// writes that passed their check may still land), and leads again, round
// after round. No append of an ended leadership lands after a higher
// generation's record, every acknowledged put is in the log at its
// offset, nothing fails the shard, and the index rebuilt at the end names
// each key's last record.
func TestWritesRacingLeadershipChangesKeepTheLogAndTheIndexRight(t *testing.T) {
	r := newFakeReplication()
	_, c := replicatedStore(t, vfs.NewMem(), r, Config{})
	values := r.part(t, 0, engine.PartCacheValues)
	var mu sync.Mutex
	acked := map[int64]string{} // offset -> value
	var acks atomic.Int64
	progress := make(chan struct{}, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				v := fmt.Sprintf("w%d-%d", w, i)
				res, err := c.Put(fmt.Appendf(nil, "k%d", i%5), []byte(v), PutOptions{})
				if _, aerr := c.CounterAdd([]byte("n"), 1); aerr != nil && !errors.Is(aerr, engine.ErrNotLeader) {
					t.Errorf("add: %v", aerr)
				}
				switch {
				case err == nil:
					mu.Lock()
					acked[res.Offset] = v
					mu.Unlock()
					acks.Add(1)
					select {
					case progress <- struct{}{}:
					default:
					}
				case !errors.Is(err, engine.ErrNotLeader):
					t.Errorf("put: %v, want acknowledged or redirected", err)
					return
				}
			}
		})
	}
	exited := make(chan struct{})
	go func() { wg.Wait(); close(exited) }()
	gen := uint32(2)
	rounds := 20
	if raceEnabled {
		rounds = 8
	}
	for range rounds {
		r.leads(0, gen)
		for want := acks.Load() + 10; acks.Load() < want; {
			select {
			case <-progress:
			case <-exited:
				t.Fatal("the writers stopped")
			}
		}
		r.follows(0, gen+1)
		followRacing(t, values, gen+1, valueEntry("k0", fmt.Sprintf("theirs-%d", gen+1)))
		gen += 2
	}
	close(stop)
	<-exited
	r.leads(0, gen)
	recs := values.records(t)
	last, held := map[string]string{}, map[int64]bool{}
	for i, rec := range recs {
		held[rec.Offset] = true
		if i > 0 && rec.Generation < recs[i-1].Generation {
			t.Fatalf("offset %d of generation %d follows one of %d", rec.Offset, rec.Generation, recs[i-1].Generation)
		}
		last[string(rec.Key)] = string(rec.Value)
		if v, ok := acked[rec.Offset]; ok && v != string(rec.Value) {
			t.Fatalf("offset %d acknowledged as %q holds %q", rec.Offset, v, rec.Value)
		}
	}
	for off, v := range acked {
		if !held[off] {
			t.Fatalf("%q acknowledged at offset %d, which the log does not hold", v, off)
		}
	}
	for k, v := range last {
		wantValue(t, c, k, v, -1)
	}
}

// followRacing is fakePart.follow where a writer of the leadership that
// just ended may still append once: the replica's batch then meets a log
// that moved, and is sent again at its end.
func followRacing(t *testing.T, p *fakePart, gen uint32, e shardlog.Entry) {
	t.Helper()
	l := p.pl.Log
	for range 10 {
		done := make(chan error, 1)
		first := l.Stats().Appended
		err := l.AppendAt(first, l.LastGeneration(), []shardlog.Entry{e}, gen, waitFunc(func(err error) { done <- err }))
		var de *shardlog.DivergenceError
		switch {
		case errors.As(err, &de):
			continue
		case err != nil:
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("a follower's append refused ten times")
}
