package cache

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// recordingWaiter records what it was told, and whether it was told on
// the goroutine of a *AsyncHere call (inside it) or elsewhere (the
// committer, which may run at the same time as the call); told may be
// read while a committer tells it.
type recordingWaiter struct {
	told atomic.Int32
	here atomic.Bool
	res  Written
	err  error
}

func (w *recordingWaiter) CacheWritten(res Written, err error) {
	w.res, w.err = res, err
	buf := make([]byte, 16<<10)
	w.here.Store(strings.Contains(string(buf[:runtime.Stack(buf, false)]), "AsyncHere("))
	w.told.Add(1)
}

// PutAsyncHere and DeleteAsyncHere write on the caller's goroutine, and
// tell the waiter before they return, exactly when the log allows it: a
// Periodic log whose committer is idle, with no more than maxBytes queued.
// Otherwise (OnCommit, or more queued) the committer is woken and answers,
// as with PutAsync; and in every case the write is there to read.
func TestAWriteHereIsAnsweredBeforeItReturnsOnlyWhenTheLogAllows(t *testing.T) {
	for _, c := range []struct {
		name     string
		fsync    shardlog.FsyncMode
		maxBytes int
		here     bool
	}{
		{"periodic", shardlog.Periodic(time.Second), 1 << 20, true},
		{"periodic_over_max_bytes", shardlog.Periodic(time.Second), 8, false},
		{"periodic_max_bytes_0", shardlog.Periodic(time.Second), 0, false},
		{"on_commit", shardlog.OnCommit(), 1 << 20, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := testOptions(vfs.NewMem(), nil)
				o.Fsync = c.fsync
				s := openStore(t, o)
				defer s.Close()
				if _, err := s.Create(cid, Config{Durable: true}); err != nil {
					t.Fatal(err)
				}
				cc := mustCache(t, s)
				synctest.Wait() // the committer waits for records
				var put, del recordingWaiter
				if err := cc.PutAsyncHere([]byte("k"), []byte("v"), PutOptions{}, &put, c.maxBytes); err != nil {
					t.Fatal(err)
				}
				if c.here && put.told.Load() != 1 {
					t.Fatal("put not told before it returned")
				}
				synctest.Wait()
				if put.here.Load() != c.here {
					t.Fatalf("put told inside the call: %v, want %v", put.here.Load(), c.here)
				}
				if put.told.Load() != 1 || put.err != nil || put.res.Offset != 0 {
					t.Fatalf("put: told %d times, %+v, %v", put.told.Load(), put.res, put.err)
				}
				wantValue(t, cc, "k", "v", 0)
				if err := cc.DeleteAsyncHere([]byte("k"), Condition{}, &del, c.maxBytes); err != nil {
					t.Fatal(err)
				}
				if c.here && del.told.Load() != 1 {
					t.Fatal("delete not told before it returned")
				}
				synctest.Wait()
				if del.here.Load() != c.here {
					t.Fatalf("delete told inside the call: %v, want %v", del.here.Load(), c.here)
				}
				if del.told.Load() != 1 || del.err != nil || !del.res.Existed || del.res.Offset != 1 {
					t.Fatalf("delete: told %d times, %+v, %v", del.told.Load(), del.res, del.err)
				}
				if it, err := cc.Get([]byte("k"), nil); err != nil || it.Found {
					t.Fatalf("get after the delete: %+v, %v", it, err)
				}
			})
		})
	}
}

// A writer reads a key's record before taking the shard's writer lock only
// once some value of the shard has an expiry (a put over a value without
// one needs nothing from its record), and the shard remembers that across
// a restart, from the log.
func TestAWriterPreReadsOnlyInAShardWithExpiries(t *testing.T) {
	fs := vfs.NewMem()
	clk := newClock()
	s, c := newCache(t, fs, clk, Config{Durable: true})
	sh := c.held(0)
	put(t, c, "plain", "v", PutOptions{})
	fp := func(key string) fingerprint { return sh.ix.fingerprint(keyHash([]byte(key)), []byte(key)) }
	if p := sh.preRead(fp("plain"), []byte("plain")); p.valid || sh.expiries.Load() {
		t.Fatalf("a shard with no expiry pre-read %+v", p)
	}
	put(t, c, "ttl", "v", PutOptions{TTL: time.Minute})
	if p := sh.preRead(fp("ttl"), []byte("ttl")); !p.valid || p.head.expiresAt == 0 {
		t.Fatalf("the expiring key's pre-read: %+v", p)
	}
	s, c = reopen(t, s, fs, clk)
	defer s.Close()
	if sh := c.held(0); !sh.expiries.Load() {
		t.Fatal("the rebuilt shard forgot its expiries")
	}
	put(t, c, "ttl", "w", PutOptions{TTL: time.Minute})
	wantValue(t, c, "ttl", "w", -1)
}
