package disk

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/ring"
)

// GroupCommit measures the group-commit ceiling: o.Writers goroutines each
// hand one record to ONE write+fdatasync loop and wait for its ack, then
// hand the next. Each flush writes, in one write, every record queued
// before it began, and acks them all after its fdatasync. Records/s is the
// ceiling; latency is each record's wait from hand-off to ack. A
// RoleBaseline named "groupcommit/<file>/raw".
func GroupCommit(ctx context.Context, dir string, o GroupOptions) (bench.Result, error) {
	return groupLoop(ctx, dir, o, nil)
}

// RingGroupCommit is GroupCommit with every flush through d (ring.WriteAtSync:
// a write linked to an fdatasync, one flush in flight at a time, as in the
// bare loop, so the two differ only in the IO path). A RoleWorkload named
// "groupcommit/<file>/<driver kind>".
func RingGroupCommit(ctx context.Context, dir string, d ring.Driver, o GroupOptions) (bench.Result, error) {
	return groupLoop(ctx, dir, o, d)
}

func groupLoop(ctx context.Context, dir string, o GroupOptions, d ring.Driver) (bench.Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	file, err := openDataFile(dir, o.File, o.FileBytes)
	if err != nil {
		return bench.Result{}, err
	}
	defer file.close()
	s := syncerFor(d, file)
	c := newCommitter(s, file, o.Writers, o.RecordBytes)
	go c.loop()
	defer c.close()
	op := func(w int) (int64, int64, error) {
		if err := c.commit(w); err != nil {
			return 0, 0, err
		}
		return 1, int64(o.RecordBytes), nil
	}
	name := "groupcommit/" + o.File.String() + "/" + s.path()
	p := bench.Params{RecordBytes: o.RecordBytes, Writers: o.Writers, Fsync: "fdatasync", IOPath: s.path(),
		Extra: map[string]string{"file": o.File.String()}}
	load := bench.Load{Workers: o.Writers, Ops: o.Records, Duration: o.Duration}
	return measure(ctx, name, roleOf(s), p, dir, load, o.Progress, op)
}

// committer is the single flush loop. Writers queue their index under mu
// and wait on their own ack channel; the loop takes the whole queue,
// writes the records in queue order with one write, syncs, and acks each.
// Nothing is allocated per record: every buffer and channel exists from
// newCommitter on.
//
// Ownership: queue and closed belong to mu; records[w] is written by writer
// w only while it is not queued and read by the loop only while it is;
// batch and spare belong to the loop.
type committer struct {
	s       syncer
	file    *dataFile
	records [][]byte        // one per writer
	acks    []chan struct{} // one per writer, capacity 1
	wake    chan struct{}   // capacity 1: "the queue may be non-empty"
	exited  chan struct{}
	batch   []byte // the loop's write buffer, Writers*RecordBytes
	err     atomic.Pointer[error]

	mu     sync.Mutex
	queue  []int
	spare  []int
	closed bool
}

func newCommitter(s syncer, file *dataFile, writers, recordBytes int) *committer {
	c := &committer{
		s:       s,
		file:    file,
		records: make([][]byte, writers),
		acks:    make([]chan struct{}, writers),
		wake:    make(chan struct{}, 1),
		exited:  make(chan struct{}),
		batch:   make([]byte, 0, writers*recordBytes),
		queue:   make([]int, 0, writers),
		spare:   make([]int, 0, writers),
	}
	for w := range c.records {
		c.records[w] = pattern(make([]byte, recordBytes))
		c.acks[w] = make(chan struct{}, 1)
	}
	return c
}

// commit queues writer w's record and waits until a flush has made it
// durable (or failed).
func (c *committer) commit(w int) error {
	c.mu.Lock()
	c.queue = append(c.queue, w)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // a wake-up is already pending; the loop will see w
	}
	<-c.acks[w]
	if errp := c.err.Load(); errp != nil {
		return *errp
	}
	return nil
}

func (c *committer) loop() {
	defer close(c.exited)
	for range c.wake {
		for {
			queued, closed := c.take()
			if len(queued) > 0 {
				c.flush(queued)
			}
			c.spare = queued // even empty: queue and spare must never share memory
			if len(queued) == 0 {
				if closed {
					return
				}
				break
			}
		}
	}
}

// take swaps the queue for the spare one and returns what was queued.
func (c *committer) take() (queued []int, closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	queued, c.queue = c.queue, c.spare[:0]
	return queued, c.closed
}

// flush writes and syncs the queued records, then acks each writer. After
// a failure it acks without IO, so no writer waits forever; each sees the
// error.
func (c *committer) flush(queued []int) {
	if c.err.Load() == nil {
		c.batch = c.batch[:0]
		for _, w := range queued {
			c.batch = append(c.batch, c.records[w]...)
		}
		if err := c.write(); err != nil {
			c.fail(err)
		}
	}
	for _, w := range queued {
		c.acks[w] <- struct{}{}
	}
}

// fail keeps the first error; a function of its own, so that only a failed
// flush moves an error to the heap.
func (c *committer) fail(err error) {
	c.err.CompareAndSwap(nil, &err)
}

func (c *committer) write() error {
	off, err := c.file.next(len(c.batch))
	if err != nil {
		return err
	}
	return c.s.writeSync(c.batch, off)
}

// close stops the loop once every writer has returned.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.exited
}
