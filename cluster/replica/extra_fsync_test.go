package replica

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
)

// syncGate stalls the fsyncs of the files opened through a gatedFS while
// it is shut.
type syncGate struct {
	mu   sync.Mutex
	shut chan struct{} // nil: open
}

func (g *syncGate) close() {
	g.mu.Lock()
	g.shut = make(chan struct{})
	g.mu.Unlock()
}

func (g *syncGate) open() {
	g.mu.Lock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
	g.mu.Unlock()
}

func (g *syncGate) wait() {
	g.mu.Lock()
	ch := g.shut
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

type gatedFS struct {
	vfs.FS
	g *syncGate
}

type gatedFile struct {
	vfs.File
	g *syncGate
}

func (fs gatedFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return gatedFile{f, fs.g}, nil
}

func (fs gatedFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return gatedFile{f, fs.g}, nil
}

func (fs gatedFS) SyncDir(dir string) error { fs.g.wait(); return fs.FS.SyncDir(dir) }

func (f gatedFile) Sync() error { f.g.wait(); return f.File.Sync() }

func (f gatedFile) WriteAtSync(p []byte, off int64) (int, error) {
	f.g.wait()
	return f.File.WriteAtSync(p, off)
}

// A follower's acknowledgement under OnCommit comes only after its
// fsync. With c frozen, a Quorum publish needs b: acknowledged, b's disk
// crashed at once still holds it (the record is on a majority, a and b's
// image). With b's fsyncs stalled, the publish is not acknowledged, and
// crashing b then loses only a record nobody was told was written.
func TestAFollowersAckComesOnlyAfterItsFsync(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		gate := &syncGate{}
		c.wrapFS = func(broker string, fs *vfs.MemFS) vfs.FS {
			if broker == "b" {
				return gatedFS{fs, gate}
			}
			return fs
		}
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		c.net.Freeze("c")
		acked := c.publishAll(sid, "synced", 1)
		c.kill("b") // right after the acknowledgement: b's disk keeps only what it synced
		c.restart("b")
		c.checkHeld("b", sid, acked)
		c.checkHeld("a", sid, acked)

		time.Sleep(c.lease / 4)
		gate.close()
		done := make(chan waitResult, 1)
		go func() {
			off, err := c.publishOn("a", sid, "stalled")
			done <- waitResult{off, err}
		}()
		time.Sleep(c.timeout / 2)
		select {
		case r := <-done:
			t.Fatalf("acknowledged while the only follower's fsync stalled: %+v", r)
		default:
		}
		b := c.brokers["b"]
		b.fs.Crash(vfs.DropUnsynced)
		img := b.fs.CrashImage()
		gate.open() // the stalled syncs go on, and fail: the disk is gone
		c.stopBroker(b)
		b.fs = img
		r := <-done
		if r.err == nil {
			t.Fatalf("acknowledged at %d though the only follower crashed before its fsync", r.first)
		}
		if !errors.Is(r.err, ErrNoQuorum) && !errors.Is(r.err, ErrUnvouched) && !errors.Is(r.err, ErrNotLeader) {
			t.Fatalf("refused with %v", r.err)
		}
		c.restart("b")
		for _, v := range c.values("b", sid) {
			if v == "stalled" {
				t.Fatal("b's disk kept a record it never fsynced")
			}
		}
	})
}
