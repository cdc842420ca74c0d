//go:build linux

package ring

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Retrying io_uring_enter when the kernel is short of memory (EAGAIN) or
// busy (EBUSY) and nothing of ours is in flight to wait for: yield a few
// times, then sleep, doubling up to backoffMax.
const (
	backoffYields = 16
	backoffMax    = 10 * time.Millisecond
)

// Submit implements Driver. It takes slots for as many whole chains of cs
// as are free (waiting while not even the next chain fits), writes their
// SQEs and enters them, and repeats until all of cs is in the kernel.
func (d *uringDriver) Submit(cs []*Completion) error {
	if len(cs) == 0 {
		return nil
	}
	if err := checkBatch(cs, d.chainMax); err != nil {
		return err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	d.submitters++
	for len(cs) > 0 {
		n, first := d.takeSlotsLocked(cs)
		d.mu.Unlock()
		d.queue(cs[:n], first)
		cs = cs[n:]
		d.mu.Lock()
	}
	d.submitters--
	if d.closed {
		d.changed.Broadcast()
	}
	d.mu.Unlock()
	return nil
}

// takeSlotsLocked takes slots for the longest prefix of whole chains of cs
// that fits, at least one chain, and records each Completion in the table.
// The slots are linked through d.next from first. Called with mu held.
func (d *uringDriver) takeSlotsLocked(cs []*Completion) (n int, first uint32) {
	for need := chainLen(cs); len(d.free) < need; {
		if d.hooks.slotWait != nil {
			d.hooks.slotWait()
		}
		d.changed.Wait()
	}
	last := noSlot
	for n < len(cs) {
		k := chainLen(cs[n:])
		if len(d.free) < k {
			break
		}
		for _, c := range cs[n : n+k] {
			s := d.free[len(d.free)-1]
			d.free = d.free[:len(d.free)-1]
			d.table[s] = c
			if last == noSlot {
				first = s
			} else {
				d.next[last] = s
			}
			last = s
		}
		n += k
	}
	d.next[last] = noSlot
	return n, first
}

// queue writes the SQEs of cs (slots linked from first) and enters them. A
// chain is always written whole into the SQ ring before an enter, so the
// kernel never sees it cut. Completions are read under mu so that the
// reaper, which frees their slots under mu, happens after.
func (d *uringDriver) queue(cs []*Completion, first uint32) {
	d.sqMu.Lock()
	defer d.sqMu.Unlock()
	s := first
	d.mu.Lock()
	for len(cs) > 0 {
		k := chainLen(cs)
		if d.sqRoom() < uint32(k) {
			d.mu.Unlock()
			d.flushLocked()
			d.mu.Lock()
		}
		for i, c := range cs[:k] {
			d.prepare(s, c, i < k-1)
			s = d.next[s]
		}
		cs = cs[k:]
	}
	d.mu.Unlock()
	d.flushLocked()
}

// sqRoom is how many SQEs can be written before the kernel consumes more.
func (d *uringDriver) sqRoom() uint32 {
	return d.ring.sqEntries - (d.sqTail - atomic.LoadUint32(d.ring.sqHead))
}

// prepare pins c's memory in slot s and writes its SQE at the tail. Called
// with sqMu and mu held.
func (d *uringDriver) prepare(s uint32, c *Completion, link bool) {
	e := sqe{fd: int32(c.FD), off: uint64(c.Off), userData: uint64(s)}
	if link {
		e.flags = iosqeIOLink
	}
	switch c.Op {
	case OpNop:
		e.opcode, e.fd, e.off = opNop, 0, 0
	case OpRead:
		e.opcode = opRead
		e.addr, e.len = d.pinBuf(s, c.Buf)
	case OpWrite:
		e.opcode = opWrite
		e.addr, e.len = d.pinBuf(s, c.Buf)
	case OpWritev:
		e.opcode = opWritev
		e.addr, e.len = d.fillIovecs(s, c.Bufs)
	case OpFdatasync:
		e.opcode, e.off, e.opFlags = opFsync, 0, fsyncDatasync
	}
	*d.ring.sqe(d.sqTail) = e
	d.sqTail++
}

func (d *uringDriver) pin(s uint32, p *byte) {
	sp := &d.pins[s]
	sp.pinners[sp.used/pinsPerPinner].Pin(p)
	sp.used++
}

func (d *uringDriver) unpin(s uint32) {
	sp := &d.pins[s]
	for i := 0; i*pinsPerPinner < sp.used; i++ {
		sp.pinners[i].Unpin()
	}
	sp.used = 0
}

func (d *uringDriver) pinBuf(s uint32, b []byte) (addr uint64, n uint32) {
	if len(b) == 0 {
		return 0, 0
	}
	d.pin(s, &b[0])
	return uint64(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))
}

// fillIovecs writes bufs into slot s's iovec array in the arena.
func (d *uringDriver) fillIovecs(s uint32, bufs [][]byte) (addr uint64, n uint32) {
	base := unsafe.Pointer(&d.arena[int(s)*MaxIovecs*int(unsafe.Sizeof(iovec{}))])
	vs := unsafe.Slice((*iovec)(base), MaxIovecs)
	for i, b := range bufs {
		v := iovec{}
		if len(b) > 0 {
			d.pin(s, &b[0])
			v = iovec{base: uintptr(unsafe.Pointer(&b[0])), len: uintptr(len(b))}
		}
		vs[i] = v
	}
	return uint64(uintptr(base)), uint32(len(bufs))
}

// flushLocked publishes the SQ tail and enters until the kernel has taken
// every queued SQE. Called with sqMu held and mu not held. While it waits
// for the reaper (EAGAIN, EBUSY) it lets go of sqMu, so that a Done that
// submits can still get in; whoever flushes next takes our SQEs along.
func (d *uringDriver) flushLocked() {
	for tries := 0; ; {
		atomic.StoreUint32(d.ring.sqTail, d.sqTail)
		pending := d.sqTail - atomic.LoadUint32(d.ring.sqHead)
		if pending == 0 {
			return
		}
		n, err := d.enter(d.fd, pending, 0, 0)
		if n > 0 {
			d.inKernel.Add(int64(n))
			d.wakeReaper()
			tries = 0
		}
		switch {
		case err == unix.EINTR, err == nil && n > 0:
		case err == nil, err == unix.EAGAIN, err == unix.EBUSY:
			tries++
			d.sqMu.Unlock()
			d.awaitKernel(tries)
			d.sqMu.Lock()
		default:
			panic(fmt.Sprintf("felix/ring: io_uring_enter submitting %d SQEs: %v (a driver bug: the ring is unusable)", pending, err))
		}
	}
}

// wakeReaper tells a reaper parked in waitCQE that the kernel has taken new
// SQEs. The channel holds one token, so a wake-up is never lost and never blocks.
func (d *uringDriver) wakeReaper() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// awaitKernel waits for the reaper's next pass when the kernel holds
// operations of ours, or backs off when it holds none. It also backs off
// while the reaper runs callbacks: the submitter may be a Done, and the
// reaper cannot finish a pass while it waits for itself.
func (d *uringDriver) awaitKernel(tries int) {
	d.mu.Lock()
	if d.inKernel.Load() > 0 && !d.inCallbacks.Load() {
		for gen := d.reapGen; gen == d.reapGen; {
			d.changed.Wait()
		}
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	if tries <= backoffYields {
		runtime.Gosched()
		return
	}
	time.Sleep(min(time.Microsecond<<min(tries-backoffYields, 20), backoffMax))
}
