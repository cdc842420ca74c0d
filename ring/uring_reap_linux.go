//go:build linux

package ring

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// reap is the reaper goroutine: it waits for CQEs, harvests every one that
// is there, frees their slots, and only then calls their Done callbacks. It
// returns after the pass that holds Close's sentinel NOP.
func (d *uringDriver) reap() {
	defer close(d.reaperDone)
	for {
		d.waitCQE()
		if d.reapPass() {
			return
		}
	}
}

// waitCQE returns once the CQ ring holds a CQE. While the kernel holds
// operations of ours it blocks in io_uring_enter(GETEVENTS, min_complete=1),
// and the kernel flushes its overflow list on the way in. While it holds
// none, it parks on d.kick instead, which every submission signals once the
// kernel has taken its SQEs: operations that complete inside the submitting
// enter (page-cache reads, NOPs) then reach the reaper by a goroutine
// hand-off rather than by waking a thread asleep in the kernel, which costs
// tens of microseconds. With Config.ReapSpin it first polls the CQ ring for
// that long.
func (d *uringDriver) waitCQE() {
	var spinStart time.Time
	for atomic.LoadUint32(d.ring.cqTail) == atomic.LoadUint32(d.ring.cqHead) {
		if d.inKernel.Load() <= 0 {
			<-d.kick
			continue
		}
		if d.spinning(&spinStart) {
			runtime.Gosched()
			continue
		}
		_, err := d.enter(d.fd, 0, 1, enterGetEvents)
		d.checkReapErr(err)
	}
}

// spinning reports whether the reaper is still within its ReapSpin budget,
// which starts at the first look that found the CQ ring empty.
func (d *uringDriver) spinning(start *time.Time) bool {
	if d.reapSpin <= 0 {
		return false
	}
	now := time.Now()
	if start.IsZero() {
		*start = now
	}
	return now.Sub(*start) < d.reapSpin
}

func (d *uringDriver) checkReapErr(err error) {
	switch err {
	case nil, unix.EINTR, unix.EAGAIN, unix.EBUSY:
		return
	case unix.EBADR:
		panic(fmt.Sprintf("felix/ring: the kernel dropped %d completions (EBADR): waiters would hang",
			atomic.LoadUint32(d.ring.cqOverflow)))
	}
	panic(fmt.Sprintf("felix/ring: io_uring_enter(GETEVENTS): %v (a driver bug: the ring is unusable)", err))
}

// reapPass frees the slots of every harvested CQE under mu, then calls the
// Done callbacks with no lock held. It reports whether the sentinel came.
func (d *uringDriver) reapPass() (sentinel bool) {
	d.harvestCQEs()
	d.mu.Lock()
	for _, e := range d.harvest {
		if e.userData == sentinelUserData {
			sentinel = true
			continue
		}
		d.ready = append(d.ready, d.complete(e))
	}
	d.inKernel.Add(-int64(len(d.harvest)))
	d.harvest = d.harvest[:0]
	d.reapGen++
	d.changed.Broadcast()
	d.mu.Unlock()
	d.inCallbacks.Store(true)
	for i, c := range d.ready {
		d.ready[i] = nil
		if c.Done != nil {
			c.Done(c)
		}
	}
	d.inCallbacks.Store(false)
	d.ready = d.ready[:0]
	return sentinel
}

// complete records e's result and frees its slot. Called with mu held.
func (d *uringDriver) complete(e cqe) *Completion {
	if e.userData >= uint64(d.slots) || d.table[e.userData] == nil {
		panic(fmt.Sprintf("felix/ring: CQE for slot %d, which is not in flight (a driver bug)", e.userData))
	}
	s := uint32(e.userData)
	c := d.table[s]
	d.table[s] = nil
	c.Res = e.res
	d.unpin(s)
	d.free = append(d.free, s)
	return c
}

// harvestCQEs copies out every CQE in the ring and hands the entries back
// to the kernel. When the kernel parked completions in its overflow list
// (IORING_SQ_CQ_OVERFLOW), it has them flushed into the ring and goes on:
// no completion is left behind.
func (d *uringDriver) harvestCQEs() {
	for {
		head := atomic.LoadUint32(d.ring.cqHead)
		tail := atomic.LoadUint32(d.ring.cqTail) // acquire: CQEs up to tail are written
		for ; head != tail; head++ {
			if len(d.harvest) == cap(d.harvest) {
				panic("felix/ring: more completions than operations in flight (a driver bug)")
			}
			d.harvest = append(d.harvest, *d.ring.cqe(head))
		}
		atomic.StoreUint32(d.ring.cqHead, head) // release: the kernel may reuse them
		if !d.ring.sqOverflowed() {
			return
		}
		d.overflowFlushes.Add(1)
		_, err := d.enter(d.fd, 0, 0, enterGetEvents)
		d.checkReapErr(err)
		if atomic.LoadUint32(d.ring.cqTail) == head {
			return // nothing moved yet: waitCQE will flush and wait
		}
	}
}
