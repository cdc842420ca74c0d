//go:build linux

package ring

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// sentinelUserData marks the NOP Close submits to wake the reaper for
	// the last time. Slot indices are below entriesMax, so it never collides.
	sentinelUserData = ^uint64(0)

	// pinsPerPinner keeps each runtime.Pinner within its inline store
	// (5 pointers on 64-bit), so pinning a writev's buffers never grows a
	// slice; pinnersPerSlot then covers MaxIovecs buffers.
	pinsPerPinner  = 4
	pinnersPerSlot = (MaxIovecs + pinsPerPinner - 1) / pinsPerPinner

	noSlot = ^uint32(0)
)

// uringDriver is the io_uring Driver. See doc.go for the lock order and
// which goroutine owns what.
type uringDriver struct {
	fd       int
	enter    enterFunc
	ring     *rings
	arena    []byte // per-slot iovec arrays, mmap'd: the kernel reads them
	hooks    *hooks
	slots    int
	chainMax int
	reapSpin time.Duration

	sqMu   sync.Mutex // outer lock: the SQE array, sqTail, submitting enters
	sqTail uint32     // next SQE to fill; published to ring.sqTail by flushLocked

	mu         sync.Mutex // inner lock: everything below until the reaper's fields
	changed    sync.Cond  // on mu: slots freed, a reap pass done, a Submit ended
	table      []*Completion
	next       []uint32   // slot -> next slot taken by the same takeSlots call
	pins       []slotPins // buffers of in-flight slots, pinned
	free       []uint32   // stack of free slots
	submitters int        // Submit calls in progress
	reapGen    uint64     // reap passes so far
	closed     bool

	// Owned by the reaper goroutine.
	harvest    []cqe
	ready      []*Completion
	reaperDone chan struct{}
	kick       chan struct{} // one token: SQEs entered since the reaper looked

	// The waiting path (waitpath.go): WriteAt, ReadAt, Fdatasync and
	// WriteAtSync, run direct or through the ring.
	waitPath

	// inKernel counts SQEs the kernel took whose CQEs are not yet reaped.
	// The submitter adds after enter returns, so the reaper may take it
	// below zero for a moment.
	inKernel        atomic.Int64
	inCallbacks     atomic.Bool   // the reaper is calling Done callbacks
	overflowFlushes atomic.Uint64 // for tests: CQ overflow flushes done
}

type slotPins struct {
	pinners [pinnersPerSlot]runtime.Pinner
	used    int // pins taken, across pinners
}

func openUring(cfg Config) (Driver, error) {
	p := uringParams{}
	sqWant := cfg.Entries
	if cfg.hooks.sqEntries != 0 {
		sqWant = cfg.hooks.sqEntries
	}
	if cfg.hooks.cqEntries != 0 {
		p.flags |= setupCQSize
		p.cqEntries = cfg.hooks.cqEntries
	}
	fd, err := uringSetup(sqWant, &p)
	if err != nil {
		return nil, refusal(err)
	}
	if missing := missingFeatures(p.features); missing != "" {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%w: the kernel lacks %s", ErrUnavailable, missing)
	}
	d, err := newUringDriver(fd, &p, cfg)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	go d.reap()
	return d, nil
}

func newUringDriver(fd int, p *uringParams, cfg Config) (*uringDriver, error) {
	ring, err := mapRings(fd, p)
	if err != nil {
		return nil, err
	}
	slots := int(cfg.Entries)
	arena, err := unix.Mmap(-1, 0, slots*MaxIovecs*int(unsafe.Sizeof(iovec{})),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		ring.unmap()
		return nil, fmt.Errorf("mmap iovec arena: %w", err)
	}
	d := &uringDriver{
		fd: fd, enter: cfg.hooks.enter, ring: ring, arena: arena, hooks: cfg.hooks,
		slots: slots, chainMax: min(slots, int(ring.sqEntries)), reapSpin: cfg.ReapSpin,
		table: make([]*Completion, slots), next: make([]uint32, slots),
		pins: make([]slotPins, slots), free: make([]uint32, slots),
		harvest: make([]cqe, 0, slots+1), ready: make([]*Completion, 0, slots),
		reaperDone: make(chan struct{}), kick: make(chan struct{}, 1),
	}
	d.waitPath.init(d, cfg.hooks)
	if d.enter == nil {
		d.enter = rawEnter
	}
	d.changed.L = &d.mu
	for i := range d.free {
		d.free[i] = uint32(slots - 1 - i) // pop order 0, 1, 2, ...
	}
	return d, nil
}

// Kind reports KindUring.
func (d *uringDriver) Kind() Kind { return KindUring }

// Close stops new Submits, waits until every submitted operation has
// completed and its Done has returned, then wakes the reaper with a
// sentinel NOP, unmaps the rings and closes the ring fd. It must not be
// called from a Done callback.
func (d *uringDriver) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	d.closed = true
	d.closing.Store(true)
	d.mu.Unlock()
	if d.hooks.closeWait != nil {
		d.hooks.closeWait()
	}
	d.mu.Lock()
	for d.submitters > 0 || len(d.free) < d.slots {
		d.changed.Wait()
	}
	d.mu.Unlock()

	d.sqMu.Lock()
	*d.ring.sqe(d.sqTail) = sqe{opcode: opNop, userData: sentinelUserData}
	d.sqTail++
	d.flushLocked()
	d.sqMu.Unlock()
	<-d.reaperDone
	return d.release()
}

func (d *uringDriver) release() error {
	d.ring.unmap()
	_ = unix.Munmap(d.arena)
	d.arena = nil
	if err := unix.Close(d.fd); err != nil {
		return fmt.Errorf("felix/ring: close io_uring fd: %w", err)
	}
	return nil
}
