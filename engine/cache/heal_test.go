package cache

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// fillDisk makes efs a full disk for the caches: every call that takes new
// space (a new file, a reservation) fails with ENOSPC. Writes into space a
// file already holds pass, as on a file system that preallocates.
func fillDisk(efs *errorfs.FS) {
	for _, op := range []errorfs.OpKind{errorfs.Create, errorfs.Preallocate} {
		efs.Inject(errorfs.Rule{Op: op, PathContains: "/data/caches", Err: syscall.ENOSPC})
	}
}

// openDurable opens a store on fs, closed when the test ends (inside its
// synctest bubble), and the durable test cache in it, creating it first
// when create is set.
func openDurable(t *testing.T, fs vfs.FS, create bool) (*Store, *Cache) {
	t.Helper()
	s := openStore(t, testOptions(fs, nil))
	t.Cleanup(func() { s.Close() })
	if create {
		if _, err := s.Create(cid, Config{Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	return s, mustCache(t, s)
}

// told is a waiter of the test's own: Put's pooled one must not carry a
// channel out of a synctest bubble.
type told struct{ ch chan error }

func newTold() *told                                   { return &told{ch: make(chan error, 1)} }
func (w *told) CacheWritten(_ Written, err error)      { w.ch <- err }
func (w *told) CounterAdded(_ CounterValue, err error) { w.ch <- err }

// putWaiting puts and waits for the answer.
func putWaiting(c *Cache, key, value string) error {
	w := newTold()
	if err := c.PutAsync([]byte(key), []byte(value), PutOptions{}, w); err != nil {
		return err
	}
	return <-w.ch
}

// putUntilRefused puts a value of one of ten keys at a time, from i on,
// into acked, until a put is refused for lack of space.
func putUntilRefused(t *testing.T, c *Cache, acked map[string]string, i int) {
	t.Helper()
	for limit := i + 1000; i < limit; i++ {
		k, v := fmt.Sprintf("k%d", i%10), fmt.Sprintf("v%d", i)
		err := putWaiting(c, k, v)
		switch {
		case errors.Is(err, shardlog.ErrNoSpace):
			return
		case err != nil:
			t.Fatalf("put %d on a full disk: %v; want acknowledged or ErrNoSpace", i, err)
		}
		acked[k] = v
	}
	t.Fatal("a thousand puts on a full disk and none refused")
}

func wantValues(t *testing.T, c *Cache, acked map[string]string) {
	t.Helper()
	for k, v := range acked {
		wantValue(t, c, k, v, -1)
	}
}

// A cache shard whose disk filled up refuses puts with ErrNoSpace while
// the disk stays full, and once space is freed it serves puts again
// without a restart; every acknowledged value is there (the refused puts
// had already pointed the index at offsets the reopened log gives to
// others), and a restart finds the same.
func TestACacheShardOutOfSpaceServesPutsAgainOnceSpaceIsFreedWithoutARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		efs := errorfs.Wrap(mem)
		s, c := openDurable(t, efs, true)
		acked := map[string]string{}
		for i := range 20 {
			if err := putWaiting(c, fmt.Sprintf("k%d", i%10), fmt.Sprintf("v%d", i)); err != nil {
				t.Fatal(err)
			}
			acked[fmt.Sprintf("k%d", i%10)] = fmt.Sprintf("v%d", i)
		}
		fillDisk(efs)
		putUntilRefused(t, c, acked, 20)
		time.Sleep(time.Minute) // several reopens, each refused by the probe
		synctest.Wait()
		if err := putWaiting(c, "k0", "late"); !errors.Is(err, shardlog.ErrNoSpace) {
			t.Fatalf("a put a minute later, the disk still full: %v; want ErrNoSpace", err)
		}
		efs.Clear() // space is freed
		time.Sleep(shardlog.HealBackoffMax)
		synctest.Wait()
		wantValues(t, c, acked)
		for i := range 60 { // across rollovers again
			k, v := fmt.Sprintf("k%d", i%7), fmt.Sprintf("after%d", i)
			if err := putWaiting(c, k, v); err != nil {
				t.Fatalf("put %d once space is back: %v", i, err)
			}
			acked[k] = v
		}
		wantValues(t, c, acked)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		_, c = openDurable(t, mem, false)
		wantValues(t, c, acked)
	})
}

// A flush that fails partway (ENOSPC after some of its bytes) leaves its
// writes' fate unknown; the reopened log recovers the records that were
// whole, the index takes them in as a restart would, and a live watch is
// handed them before the writes made after the reopen: no gap, no
// duplicate.
func TestACacheWatchSeesNoGapAcrossTheReopen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		_, c := openDurable(t, efs, true)
		for i := range 5 {
			if err := putWaiting(c, fmt.Sprintf("k%d", i), "old"); err != nil {
				t.Fatal(err)
			}
		}
		w, err := c.Watch(WatchOptions{Prefix: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: "/data/caches", Nth: 1, ShortBy: 1, Err: syscall.ENOSPC})
		putInOneFlush(t, c, "k5", "k6", "k7")
		time.Sleep(shardlog.HealBackoffMin)
		synctest.Wait()
		if end := c.held(0).log().End(); end != 7 {
			t.Fatalf("the reopened log ends at %d; want 7 (k5 and k6 whole, k7 torn)", end)
		}
		wantValue(t, c, "k5", "new", 5)
		wantMissing(t, c, "k7")
		if err := putWaiting(c, "k8", "after"); err != nil {
			t.Fatalf("a put after the reopen: %v", err)
		}
		for i, want := range []string{"k5=new", "k6=new", "k8=after"} {
			ev := mustNext(t, w)
			if got := fmt.Sprintf("%s=%s", ev.Key, ev.Value); ev.Offset != int64(5+i) || got != want {
				t.Fatalf("watch event %d: %s; want %s at offset %d", i, describe(ev), want, 5+i)
			}
		}
	})
}

// putInOneFlush appends a put of "new" to each key, all into one flush,
// whose write then fails partway; each is told its fate is unknown.
func putInOneFlush(t *testing.T, c *Cache, keys ...string) {
	t.Helper()
	var ws []*told
	for _, k := range keys {
		sh, fp, _ := c.route([]byte(k))
		w := newTold()
		if err := sh.put(fp, []byte(k), []byte("new"), 0, Condition{}, w, false); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	c.held(0).log().Wake()
	for i, w := range ws {
		if err := <-w.ch; !errors.Is(err, syscall.ENOSPC) || errors.Is(err, shardlog.ErrNoSpace) {
			t.Fatalf("put %s whose flush failed partway: %v; want ENOSPC, not ErrNoSpace (its fate is unknown)", keys[i], err)
		}
	}
}

// keyOn returns a key of c that lives on shard.
func keyOn(c *Cache, shard int) string {
	for i := 0; ; i++ {
		if k := fmt.Sprintf("key%d", i); c.ShardFor([]byte(k)) == shard {
			return k
		}
	}
}

// Of two shards, the one whose log failed for lack of space is reopened
// once space is back; the one whose log failed for another cause (EIO) is
// not: the disk is suspect, and it stays failed until the cache is opened
// again.
func TestACacheShardThatFailedWithEIOIsNotReopened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		s := openStore(t, testOptions(efs, nil))
		t.Cleanup(func() { s.Close() })
		if _, err := s.Create(cid, Config{Durable: true, Shards: 2}); err != nil {
			t.Fatal(err)
		}
		c := mustCache(t, s)
		eio, full := keyOn(c, 0), keyOn(c, 1)
		before := c.held(0).log()
		efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: "shard-0000/values", Nth: 1, Err: syscall.EIO})
		if err := putWaiting(c, eio, "lost"); !errors.Is(err, syscall.EIO) {
			t.Fatalf("a put over a failing disk: %v", err)
		}
		for _, op := range []errorfs.OpKind{errorfs.Create, errorfs.Preallocate} {
			efs.Inject(errorfs.Rule{Op: op, PathContains: "shard-0001/values", Err: syscall.ENOSPC})
		}
		for i := 0; !errors.Is(putWaiting(c, full, fmt.Sprint(i)), shardlog.ErrNoSpace); i++ {
			if i == 1000 {
				t.Fatal("a thousand puts on a full disk and none refused")
			}
		}
		efs.Clear()
		time.Sleep(shardlog.HealBackoffMax)
		synctest.Wait()
		if err := putWaiting(c, full, "again"); err != nil {
			t.Fatalf("a put on the shard that ran out of space, once space is back: %v", err)
		}
		if err := putWaiting(c, eio, "again"); !errors.Is(err, syscall.EIO) || errors.Is(err, shardlog.ErrNoSpace) {
			t.Fatalf("a put on the shard failed by EIO: %v; want the EIO failure", err)
		}
		if c.held(0).log() != before {
			t.Fatal("a log failed with EIO was reopened")
		}
	})
}

// A shard waiting for space tries its reopen again and again; closing the
// store stops the retries: Close returns, no probe of the disk follows,
// and no goroutine is left (synctest.Test would report it).
func TestClosingACacheShardWaitingForSpaceStopsItsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		s, c := openDurable(t, efs, true)
		fillDisk(efs)
		putUntilRefused(t, c, map[string]string{}, 0)
		refused := efs.Injected()
		time.Sleep(time.Minute)
		synctest.Wait()
		if efs.Injected() == refused {
			t.Fatal("a minute on a full disk and no reopen was tried")
		}
		if err := s.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		closed := efs.Injected()
		time.Sleep(time.Minute)
		synctest.Wait()
		if efs.Injected() != closed {
			t.Fatalf("%d reopens tried after Close", efs.Injected()-closed)
		}
	})
}

// addWaiting adds delta to key's counter and waits for the answer.
func addWaiting(c *Cache, key string, delta int64) error {
	w := newTold()
	if err := c.CounterAddAsync([]byte(key), delta, w); err != nil {
		return err
	}
	return <-w.ch
}

// A shard's counters log that ran out of space refuses adds with
// ErrNoSpace, and once space is freed takes them again without a restart;
// every sum is that of the acknowledged adds, then and after a restart.
func TestCountersOutOfSpaceTakeAddsAgainOnceSpaceIsFreed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		efs := errorfs.Wrap(mem)
		s, c := openDurable(t, efs, true)
		sums := map[string]int64{}
		if err := addWaiting(c, "n0", 1); err != nil {
			t.Fatal(err)
		}
		sums["n0"] = 1
		fillDisk(efs)
		for i := 1; ; i++ {
			k := fmt.Sprintf("n%d", i%3)
			err := addWaiting(c, k, int64(i))
			if errors.Is(err, shardlog.ErrNoSpace) {
				break
			}
			if err != nil || i > 1000 {
				t.Fatalf("add %d on a full disk: %v; want acknowledged or ErrNoSpace", i, err)
			}
			sums[k] += int64(i)
		}
		efs.Clear()
		time.Sleep(shardlog.HealBackoffMax)
		synctest.Wait()
		for i := range 300 { // across rollovers again
			if err := addWaiting(c, "n1", 1); err != nil {
				t.Fatalf("add %d once space is back: %v", i, err)
			}
			sums["n1"]++
		}
		wantSums(t, c, sums)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		_, c = openDurable(t, mem, false)
		wantSums(t, c, sums)
	})
}

func wantSums(t *testing.T, c *Cache, sums map[string]int64) {
	t.Helper()
	for k, sum := range sums {
		v, err := c.CounterGet([]byte(k))
		if err != nil || !v.Exists || v.Sum != sum {
			t.Fatalf("counter %s: %+v, %v; want the sum %d of the acknowledged adds", k, v, err, sum)
		}
	}
}
