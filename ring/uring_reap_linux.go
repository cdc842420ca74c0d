//go:build linux

package ring

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// reap is the reaper goroutine. It parks while the kernel holds nothing of
// ours; otherwise it takes the reap token and, holding it, waits for CQEs,
// harvests every one that is there, frees their slots, and only then calls
// their Done callbacks. It returns after the pass that holds Close's
// sentinel NOP, keeping the token: nobody may touch the rings after it.
func (d *uringDriver) reap() {
	defer close(d.reaperDone)
	for {
		d.awaitWork()
		d.reapMu.Lock()
		if d.reapHeld() {
			return
		}
		d.reapMu.Unlock()
	}
}

// awaitWork parks the reaper on d.kick while there is nothing to reap: no
// operation of ours in the kernel (as far as inKernel knows; a submitter
// adds after its enter returns, and kicks) and no sentinel seen.
func (d *uringDriver) awaitWork() {
	for d.inKernel.Load() <= 0 && !d.sentinelSeen.Load() {
		<-d.kick
	}
}

// reapHeld reaps until the kernel holds nothing of ours and the CQ ring is
// empty, or the sentinel has come. Called with the reap token.
func (d *uringDriver) reapHeld() (sentinel bool) {
	for !d.sentinelSeen.Load() && (d.inKernel.Load() > 0 || d.ring.cqReady()) {
		d.waitCQE()
		d.reapPass()
	}
	return d.sentinelSeen.Load()
}

// waitCQE returns once the CQ ring holds a CQE. Called with the reap token,
// while operations of ours are in the kernel. It blocks in
// io_uring_enter(GETEVENTS, min_complete=1), and the kernel flushes its
// overflow list on the way in. With Config.ReapSpin it first polls the CQ
// ring for that long.
func (d *uringDriver) waitCQE() {
	var spinStart time.Time
	for !d.ring.cqReady() {
		if d.spinning(&spinStart) {
			runtime.Gosched()
			continue
		}
		_, err := d.enter(d.fd, 0, 1, enterGetEvents)
		d.checkReapErr(err)
	}
}

// submitAndWait is Submit followed by a wait for every Completion of cs,
// whose Done callbacks signal done, for a caller that would block anyway.
// Its submission does not wake the reaper: when the reap token is free the
// caller takes it and reaps the ring itself, sleeping in io_uring_enter
// until its own completions are in, so the kernel wakes the waiting thread
// directly instead of the reaper, which would then wake the waiter. When
// someone else holds the token, the caller kicks the reaper (the holder
// may be about to let go) and waits on done.
func (d *uringDriver) submitAndWait(cs []*Completion, done <-chan struct{}) error {
	if err := d.submit(cs, false); err != nil {
		return err
	}
	got := 0
	if !d.hooks.noSelfReap && d.reapMu.TryLock() {
		got = d.reapUntil(done, len(cs))
		more := d.inKernel.Load() > 0 || d.ring.cqReady()
		d.reapMu.Unlock()
		if !more {
			return nil
		}
	}
	d.wakeReaper()
	for ; got < len(cs); got++ {
		<-done
	}
	return nil
}

// reapUntil reaps the ring until n signals have arrived on done. Called
// with the reap token by a caller whose n operations were submitted: until
// they are reaped, the kernel holds them, so sleeping for a CQE cannot hang.
func (d *uringDriver) reapUntil(done <-chan struct{}, n int) (got int) {
	for {
		got += drain(done, n-got)
		if got == n {
			return got
		}
		d.waitCQE()
		if d.reapPass() {
			panic("felix/ring: a waiting caller reaped Close's sentinel (a driver bug)")
		}
	}
}

// drain takes up to max signals from done without blocking.
func drain(done <-chan struct{}, max int) (got int) {
	for ; got < max; got++ {
		select {
		case <-done:
		default:
			return got
		}
	}
	return got
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
// Called with the reap token, which owns harvest and ready.
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
	if sentinel {
		d.sentinelSeen.Store(true)
	}
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
