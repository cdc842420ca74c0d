package sim

import (
	"strings"
	"sync"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// gatedFS is a broker's disk as its logs see it: a MemFS whose segment
// appends under OnCommit (a write linked to its fsync) wait for the
// simulator to let them complete. A sync is then an event the
// simulator orders, as it orders messages: a log's committer publishing an
// append (and waking the goroutines it wakes) happens at a point the seed
// chooses, when every other goroutine waits, not whenever the scheduler
// runs it beside the leader's own goroutines. It is also the fsync stall:
// a broker's syncs held for a while. A broker starting (its logs'
// recovery) or stopping syncs on the simulator's goroutine: its gate is
// open then (setOpen), since nobody else could let those syncs go. No
// other segment sync runs on the simulator's goroutine: an append there
// (Leader.Append, a follower's AppendAt) hands its write and fsync to the
// log's committer.
type gatedFS struct {
	vfs.FS
	gate   *syncGate
	broker string
}

type gatedFile struct {
	vfs.File
	fs *gatedFS
}

func (f *gatedFS) Create(name string) (vfs.File, error) { return f.wrap(name)(f.FS.Create(name)) }
func (f *gatedFS) OpenReadWrite(name string) (vfs.File, error) {
	return f.wrap(name)(f.FS.OpenReadWrite(name))
}

// wrap gates a segment's appends only (WriteAtSync): the fence file, the
// markers and the indexes are synced under locks other goroutines wait on.
func (f *gatedFS) wrap(name string) func(vfs.File, error) (vfs.File, error) {
	return func(file vfs.File, err error) (vfs.File, error) {
		if err != nil || !strings.HasSuffix(name, segment.SegmentSuffix) {
			return file, err
		}
		return &gatedFile{File: file, fs: f}, nil
	}
}

// WriteAtSync of records (past a segment's header, at offset 0) is the
// committer's write of an OnCommit append, which it runs holding no lock:
// that one waits for the gate. Every other sync goes through at once: a
// truncation syncs holding the log's mutex, a roll and the periodic sync
// theirs, and a goroutine waiting on a mutex held by one blocked at the
// gate is not durably blocked, so synctest.Wait would wait for ever.
func (f *gatedFile) WriteAtSync(p []byte, off int64) (int, error) {
	if off > 0 {
		f.fs.gate.wait(f.fs.broker)
	}
	return f.File.WriteAtSync(p, off)
}

// syncGate holds the syncs waiting for the simulator, in the order they
// came (each broker's log syncs from one goroutine at a time).
type syncGate struct {
	mu      sync.Mutex
	waiting []gatedSync
	open    map[string]bool // brokers starting or stopping: their syncs go through
}

type gatedSync struct {
	broker  string
	release chan struct{}
}

func newSyncGate() *syncGate { return &syncGate{open: map[string]bool{}} }

func (g *syncGate) wait(broker string) {
	ch := make(chan struct{})
	g.mu.Lock()
	if g.open[broker] {
		g.mu.Unlock()
		return
	}
	g.waiting = append(g.waiting, gatedSync{broker: broker, release: ch})
	g.mu.Unlock()
	<-ch
}

// ready lists, in a fixed order, the brokers with a sync waiting whose
// syncs are not stalled: one entry per broker, its oldest sync.
func (g *syncGate) ready(stalled func(string) bool) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, s := range g.waiting {
		if !stalled(s.broker) && !contains(out, s.broker) {
			out = append(out, s.broker)
		}
	}
	sortStrings(out)
	return out
}

// release lets broker's oldest waiting sync go.
func (g *syncGate) release(broker string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, s := range g.waiting {
		if s.broker == broker {
			close(s.release)
			g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
			return
		}
	}
}

// setOpen lets every sync of broker go, now and until it is closed
// again: a broker stopping (a killed one's syncs meet a crashed disk)
// must not wait on the simulator, which waits for it to stop.
func (g *syncGate) setOpen(broker string, open bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open[broker] = open
	kept := g.waiting[:0]
	for _, s := range g.waiting {
		if open && s.broker == broker {
			close(s.release)
		} else {
			kept = append(kept, s)
		}
	}
	g.waiting = kept
}
