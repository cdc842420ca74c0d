package disk

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

// gateSyncer records each flush's bytes; the first flush waits for open.
type gateSyncer struct {
	open    chan struct{}
	entered chan struct{} // closed when the first flush starts
	mu      sync.Mutex
	flushes [][]byte
	fail    error
}

func (s *gateSyncer) writeSync(b []byte, off int64) error {
	s.mu.Lock()
	first := len(s.flushes) == 0
	s.flushes = append(s.flushes, append([]byte(nil), b...))
	s.mu.Unlock()
	if first {
		close(s.entered)
		<-s.open
	}
	return s.fail
}

func (*gateSyncer) path() string { return "fake" }

// waitQueued waits, with a deadline, until n writers are queued.
func waitQueued(t *testing.T, c *committer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		queued := len(c.queue)
		c.mu.Unlock()
		if queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writers queued, want %d", queued, n)
		}
		runtime.Gosched()
	}
}

func newTestCommitter(t *testing.T, s syncer, writers int) *committer {
	t.Helper()
	file, err := openDataFile(t.TempDir(), Prezeroed, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.close() })
	c := newCommitter(s, file, writers, 8)
	for w := range c.records {
		c.records[w] = bytes.Repeat([]byte{byte('A' + w)}, 8)
	}
	go c.loop()
	return c
}

// While writer 0's flush is in flight, the 5 others queue; the next flush
// must cover all five, in one write.
func TestAFlushCoversEverythingQueuedBeforeIt(t *testing.T) {
	s := &gateSyncer{open: make(chan struct{}), entered: make(chan struct{})}
	c := newTestCommitter(t, s, 6)
	errs := make(chan error, 6)
	go func() { errs <- c.commit(0) }()
	<-s.entered // flush 1 is in flight
	for w := 1; w < 6; w++ {
		go func() { errs <- c.commit(w) }()
	}
	waitQueued(t, c, 5)
	close(s.open)
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	c.close()
	if len(s.flushes) != 2 || len(s.flushes[0]) != 8 || len(s.flushes[1]) != 5*8 {
		t.Fatalf("flush sizes %v, want 8 then 40 bytes", lens(s.flushes))
	}
	for w := 1; w < 6; w++ {
		if !bytes.Contains(s.flushes[1], bytes.Repeat([]byte{byte('A' + w)}, 8)) {
			t.Errorf("second flush lacks writer %d's record: %q", w, s.flushes[1])
		}
	}
}

func TestAFailedFlushFailsItsWritersAndLaterOnes(t *testing.T) {
	boom := errors.New("EIO")
	s := &gateSyncer{open: make(chan struct{}), entered: make(chan struct{}), fail: boom}
	close(s.open)
	c := newTestCommitter(t, s, 2)
	for range 2 {
		if err := c.commit(1); !errors.Is(err, boom) {
			t.Fatalf("commit err %v, want the flush's error", err)
		}
	}
	c.close()
	if len(s.flushes) != 1 {
		t.Errorf("%d flushes, want none after the failure", len(s.flushes))
	}
}

func TestCommitAllocatesNothing(t *testing.T) {
	c := newTestCommitter(t, rawSyncer{file: mustFile(t)}, 1)
	defer c.close()
	if allocs := testing.AllocsPerRun(20, func() { _ = c.commit(0) }); allocs != 0 {
		t.Errorf("%v allocations per commit, want 0", allocs)
	}
}

func mustFile(t *testing.T) *dataFile {
	f, err := openDataFile(t.TempDir(), Growing, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.close() })
	return f
}

func lens(bs [][]byte) []int {
	var n []int
	for _, b := range bs {
		n = append(n, len(b))
	}
	return n
}
