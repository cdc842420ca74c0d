package cache

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func wantPrecondition(t *testing.T, err error, exists bool, current int64) {
	t.Helper()
	var pe *PreconditionError
	if !errors.As(err, &pe) || !errors.Is(err, ErrPreconditionFailed) || pe.Exists != exists || pe.Current != current {
		t.Fatalf("got %v; want a precondition failure (exists %v, current %d)", err, exists, current)
	}
}

func TestAPutIfAbsentAppliesOnlyToAnAbsentKey(t *testing.T) {
	clk := newClock()
	_, c := newCache(t, nil, clk, Config{})
	defer c.store.Close()
	first := put(t, c, "k", "1", PutOptions{Cond: Condition{Kind: CondIfAbsent}})
	if first.Existed {
		t.Fatalf("first put: %+v", first)
	}
	_, err := c.Put([]byte("k"), []byte("2"), PutOptions{Cond: Condition{Kind: CondIfAbsent}})
	wantPrecondition(t, err, true, first.Offset)
	wantValue(t, c, "k", "1", first.Offset)

	// Deleted, then absent again.
	if _, err := c.Delete([]byte("k"), Condition{}); err != nil {
		t.Fatal(err)
	}
	put(t, c, "k", "3", PutOptions{Cond: Condition{Kind: CondIfAbsent}})

	// Expired counts as absent.
	put(t, c, "ttl", "old", PutOptions{TTL: time.Second})
	clk.Advance(time.Second)
	res := put(t, c, "ttl", "new", PutOptions{Cond: Condition{Kind: CondIfAbsent}})
	if res.Existed {
		t.Fatalf("an expired value counted as existing: %+v", res)
	}
	wantValue(t, c, "ttl", "new", res.Offset)
}

func TestACompareAndSetAppliesOnlyAtTheCurrentOffset(t *testing.T) {
	clk := newClock()
	_, c := newCache(t, nil, clk, Config{})
	defer c.store.Close()
	_, err := c.Put([]byte("k"), []byte("x"), PutOptions{Cond: Condition{Kind: CondIfOffset, Offset: 0}})
	wantPrecondition(t, err, false, -1)
	w1 := put(t, c, "k", "1", PutOptions{})
	w2 := put(t, c, "k", "2", PutOptions{Cond: Condition{Kind: CondIfOffset, Offset: w1.Offset}})
	if !w2.Existed {
		t.Fatalf("%+v", w2)
	}
	_, err = c.Put([]byte("k"), []byte("3"), PutOptions{Cond: Condition{Kind: CondIfOffset, Offset: w1.Offset}})
	wantPrecondition(t, err, true, w2.Offset)
	_, err = c.Delete([]byte("k"), Condition{Kind: CondIfOffset, Offset: w1.Offset})
	wantPrecondition(t, err, true, w2.Offset)
	wantValue(t, c, "k", "2", w2.Offset)
	d, err := c.Delete([]byte("k"), Condition{Kind: CondIfOffset, Offset: w2.Offset})
	if err != nil || !d.Existed || d.Offset != w2.Offset+1 {
		t.Fatalf("conditional delete: %+v, %v", d, err)
	}
	_, err = c.Delete([]byte("k"), Condition{Kind: CondIfOffset, Offset: w2.Offset})
	wantPrecondition(t, err, false, -1)

	// An expired value has no current offset.
	w := put(t, c, "ttl", "v", PutOptions{TTL: time.Second})
	clk.Advance(2 * time.Second)
	_, err = c.Put([]byte("ttl"), []byte("v2"), PutOptions{Cond: Condition{Kind: CondIfOffset, Offset: w.Offset}})
	wantPrecondition(t, err, false, -1)
}

// Of many concurrent compare-and-sets at one offset exactly one applies;
// a counter kept by compare-and-set loses no increment.
func TestConcurrentCompareAndSetsApplyOneAtATime(t *testing.T) {
	_, c := newCache(t, nil, nil, Config{})
	defer c.store.Close()
	start := put(t, c, "k", "0", PutOptions{})
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			_, err := c.Put([]byte("k"), []byte("won"), PutOptions{Cond: Condition{Kind: CondIfOffset, Offset: start.Offset}})
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, ErrPreconditionFailed):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d compare-and-sets at one offset applied", wins.Load())
	}
	const workers, each = 8, 20
	for range workers {
		wg.Go(func() {
			for done := 0; done < each; {
				it, err := c.Get([]byte("n"), nil)
				if err != nil {
					t.Error(err)
					return
				}
				n, cond := 0, Condition{Kind: CondIfAbsent}
				if it.Found {
					n, cond = int(it.Value[0]), Condition{Kind: CondIfOffset, Offset: it.Offset}
				}
				_, err = c.Put([]byte("n"), []byte{byte(n + 1)}, PutOptions{Cond: cond})
				if err == nil {
					done++
				} else if !errors.Is(err, ErrPreconditionFailed) {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if it := get(t, c, "n"); it.Value[0] != workers*each {
		t.Fatalf("counter by compare-and-set reached %d, want %d", it.Value[0], workers*each)
	}
}
