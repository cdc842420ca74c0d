package group

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// healOptions give group logs that roll over every few dozen records.
func healOptions() Options { return Options{LogSegmentBytes: 4096} }

// prepared makes a durable stream of n records and the group "g" from its
// start, and returns the disk. Outside any synctest bubble: a group made
// inside one would carry AppendWait's pooled channel out of it.
func prepared(t *testing.T, n int) *vfs.MemFS {
	t.Helper()
	f := newFixture(t, healOptions())
	f.publish(n)
	if err := f.m.Create(key("g"), engine.StartEarliest, 0); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.m.Close(), f.eng.Close()); err != nil {
		t.Fatal(err)
	}
	return f.fs
}

// reopened opens the engine and its groups over fs again, behind an
// error-injecting FS, inside the test's synctest bubble; they close when
// the test ends.
func reopened(t *testing.T, fs *vfs.MemFS) *fixture {
	t.Helper()
	f := &fixture{t: t, fs: fs, efs: errorfs.Wrap(fs), clock: newFakeClock(), owner: &switchOwner{local: true},
		opts: healOptions(), cfg: engine.StreamConfig{Durable: true}}
	f.open()
	t.Cleanup(func() { f.m.Close(); f.eng.Close() })
	return f
}

// fillLog makes the group log in dir (cursorsDir, deadDir) a full disk:
// every call that takes new space fails with ENOSPC.
func fillLog(efs *errorfs.FS, dir string) {
	for _, op := range []errorfs.OpKind{errorfs.Create, errorfs.Preallocate} {
		efs.Inject(errorfs.Rule{Op: op, PathContains: groupsDir + "/" + dir, Err: syscall.ENOSPC})
	}
}

// untilRefused settles the offsets one at a time with settle, each logged
// before the next (synctest.Wait), until one is refused for lack of space,
// and returns how many were taken.
func untilRefused(t *testing.T, offs []int64, settle func(o int64) error) int {
	t.Helper()
	for i, o := range offs {
		err := settle(o)
		if errors.Is(err, shardlog.ErrNoSpace) {
			return i
		}
		if err != nil {
			t.Fatalf("settling offset %d on a full disk: %v; want taken or ErrNoSpace", o, err)
		}
		synctest.Wait()
	}
	t.Fatalf("%d settled on a full disk and none refused", len(offs))
	return 0
}

// rebuilt describes g as a restart from what fs holds now rebuilds it:
// a copy of every file, as the engine has written it, is opened again.
func rebuilt(t *testing.T, fs vfs.FS) Description {
	t.Helper()
	img := vfs.NewMem()
	copyTree(t, fs, img, "/data")
	r := &fixture{t: t, fs: img, clock: newFakeClock(), owner: &switchOwner{local: true},
		opts: healOptions(), cfg: engine.StreamConfig{Durable: true}}
	r.open()
	defer r.eng.Close()
	defer r.m.Close()
	return r.describe("g")
}

// copyTree copies every file under dir of src into dst.
func copyTree(t *testing.T, src, dst vfs.FS, dir string) {
	t.Helper()
	names, err := src.List(dir)
	if err == nil {
		err = dst.MkdirAll(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := src.List(p); err == nil {
			copyTree(t, src, dst, p)
		} else if err := copyFile(src, dst, p); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(src, dst vfs.FS, name string) error {
	in, err := src.Open(name)
	if err != nil {
		return err
	}
	defer in.Close()
	size, err := in.Size()
	if err != nil {
		return err
	}
	b := make([]byte, size)
	if _, err := in.ReadAt(b, 0); err != nil && size > 0 {
		return err
	}
	out, err := dst.Create(name)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = out.WriteAtSync(b, 0)
	return err
}

// sameState fails unless got is where want, a restart's rebuild, stands.
func sameState(t *testing.T, got, want Description) {
	t.Helper()
	if got.Cursor != want.Cursor || got.Next != want.Next || got.InFlight != want.InFlight ||
		got.Owed != want.Owed || got.DeadLetters != want.DeadLetters {
		t.Fatalf("after the reopen the group stands at %+v; a restart rebuilds %+v", got, want)
	}
}

// A group whose cursor log ran out of space refuses acks with ErrNoSpace
// (storage_full: nothing stored) while the disk stays full, and its polls
// go on handing out what is readable; once space is freed its state is
// what a restart rebuilds from the logs, and it takes acks again without
// a restart.
func TestAGroupWhoseCursorLogRanOutOfSpaceTakesAcksAgainOnceSpaceIsFreed(t *testing.T) {
	mem := prepared(t, 300)
	synctest.Test(t, func(t *testing.T) {
		f := reopened(t, mem)
		ds := offsets(f.poll("g", "c", 250))
		fillLog(f.efs, cursorsDir)
		n := untilRefused(t, ds, func(o int64) error { return f.m.Ack(key("g"), "c", []int64{o}) })
		if err := f.m.Ack(key("g"), "c", ds[n:n+1]); !errors.Is(err, shardlog.ErrNoSpace) {
			t.Fatalf("an ack while the cursor log waits for space: %v; want ErrNoSpace", err)
		}
		if got := f.poll("g", "d", 10); len(got) != 10 || got[0].Offset != 250 {
			t.Fatalf("a poll while the cursor log waits for space: offsets %v; want 250..259", offsets(got))
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		f.efs.Clear()
		time.Sleep(shardlog.HealBackoffMax)
		synctest.Wait()
		healed := f.describe("g")
		sameState(t, healed, rebuilt(t, mem))
		if healed.Cursor > ds[n] {
			t.Fatalf("the cursor is at %d after the reopen; the ack of %d was refused", healed.Cursor, ds[n])
		}
		again := offsets(f.poll("g", "c", 300))
		if err := f.m.Ack(key("g"), "c", again); err != nil {
			t.Fatalf("an ack once space is back: %v", err)
		}
		synctest.Wait()
		if got := f.describe("g").Cursor; got != 300 {
			t.Fatalf("the cursor is at %d after acking every record; want 300", got)
		}
		f.restart()
		if got := f.describe("g").Cursor; got != 300 {
			t.Fatalf("after a restart the cursor is at %d; want 300", got)
		}
	})
}

// A group whose dead-letter log ran out of space refuses rejects with
// ErrNoSpace while the disk stays full; once space is freed its dead
// letters are what a restart rebuilds, and it dead-letters again.
func TestAGroupWhoseDeadLetterLogRanOutOfSpaceDeadLettersAgainOnceSpaceIsFreed(t *testing.T) {
	mem := prepared(t, 300)
	synctest.Test(t, func(t *testing.T) {
		f := reopened(t, mem)
		ds := offsets(f.poll("g", "c", 250))
		fillLog(f.efs, deadDir)
		untilRefused(t, ds, func(o int64) error { return f.m.Reject(key("g"), "c", []int64{o}, "bad") })
		time.Sleep(time.Minute)
		synctest.Wait()
		f.efs.Clear()
		time.Sleep(shardlog.HealBackoffMax)
		synctest.Wait()
		healed := f.describe("g")
		sameState(t, healed, rebuilt(t, mem))
		again := offsets(f.poll("g", "c", 1))
		if err := f.m.Reject(key("g"), "c", again, "bad"); err != nil {
			t.Fatalf("a reject once space is back: %v", err)
		}
		synctest.Wait()
		if got := f.describe("g").DeadLetters; got != healed.DeadLetters+1 {
			t.Fatalf("%d dead letters after one more reject; want %d", got, healed.DeadLetters+1)
		}
	})
}

// A group log that failed for another cause than space (EIO) is not
// reopened, while one that ran out of space is: the disk is suspect, and
// its acks stay refused (storage_failed: not ErrNoSpace) until a restart,
// with space to spare.
func TestAGroupLogThatFailedWithEIOIsNotReopened(t *testing.T) {
	mem := prepared(t, 300)
	synctest.Test(t, func(t *testing.T) {
		f := reopened(t, mem)
		ds := offsets(f.poll("g", "c", 250))
		fillLog(f.efs, deadDir)
		untilRefused(t, ds, func(o int64) error { return f.m.Reject(key("g"), "c", []int64{o}, "bad") })
		f.efs.Clear()
		time.Sleep(shardlog.HealBackoffMax)
		synctest.Wait()
		again := offsets(f.poll("g", "c", 300)) // the reopen dropped what was in flight
		if err := f.m.Reject(key("g"), "c", again[len(again)-1:], "bad"); err != nil {
			t.Fatalf("a reject once the dead-letter log is back: %v", err)
		}
		synctest.Wait()
		sg, err := f.m.shardOf(key("g"))
		if err != nil {
			t.Fatal(err)
		}
		before := sg.cursors.log()
		f.efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: groupsDir + "/" + cursorsDir, Err: syscall.EIO})
		f.ack("g", "c", again[0])
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := f.m.Ack(key("g"), "c", again[1:2]); !errors.Is(err, syscall.EIO) || errors.Is(err, shardlog.ErrNoSpace) {
			t.Fatalf("an ack a minute after the cursor log failed with EIO: %v; want EIO, not ErrNoSpace", err)
		}
		if sg.cursors.log() != before {
			t.Fatal("a group log failed with EIO was reopened")
		}
	})
}

// A group log waiting for space tries its reopen again and again; closing
// stops the retries: no probe of the disk follows, and no goroutine is
// left (synctest.Test would report it).
func TestClosingAGroupLogWaitingForSpaceStopsItsRetries(t *testing.T) {
	mem := prepared(t, 300)
	synctest.Test(t, func(t *testing.T) {
		f := reopened(t, mem)
		ds := offsets(f.poll("g", "c", 250))
		fillLog(f.efs, cursorsDir)
		untilRefused(t, ds, func(o int64) error { return f.m.Ack(key("g"), "c", []int64{o}) })
		refused := f.efs.Injected()
		time.Sleep(time.Minute)
		synctest.Wait()
		if f.efs.Injected() == refused {
			t.Fatal("a minute on a full disk and no reopen was tried")
		}
		if err := errors.Join(f.m.Close(), f.eng.Close()); err != nil {
			t.Fatalf("close: %v", err)
		}
		closed := f.efs.Injected()
		time.Sleep(time.Minute)
		synctest.Wait()
		if f.efs.Injected() != closed {
			t.Fatalf("%d reopens tried after Close", f.efs.Injected()-closed)
		}
	})
}
