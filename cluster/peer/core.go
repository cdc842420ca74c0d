package peer

import (
	"context"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// A request id is the request's sequence number on its link, shifted, with
// the index of its slot below: an answer finds its slot without a map, and
// an answer to a request that is no longer there (abandoned, timed out, of
// a connection before) finds another id in that slot and is dropped.
// Sequence numbers start at 1 and only rise, so no id is 0 and none is
// reused while the link lives.
const (
	idSlotBits = 16
	idSlotMask = 1<<idSlotBits - 1
	// InflightMaxCeiling is the most requests a link can have in flight:
	// the slots a request id can name.
	InflightMaxCeiling = 1 << idSlotBits
)

func seqOf(id uint64) uint64 { return id >> idSlotBits }

// slot is one request in flight.
type slot struct {
	call     *Call
	id       uint64
	deadline time.Time // zero: none
}

// core is what both transports share of one link (this broker to one
// peer): the requests awaiting answers, at most InflightMax of them.
//
// A token in tokens is taken (sent) before a request is added and given
// back when its slot is freed, so a sender waits, or is refused with
// ErrBusy, outside mu. Everything else is under mu, which the transport
// also uses for its own state of the link.
type core struct {
	peer   string
	tokens chan struct{}
	busy   error // the ErrBusy of this link, made once

	mu    sync.Mutex
	slots []slot
	free  []uint32 // indexes of free slots, a stack
	seq   uint64   // the last sequence number issued
	// sent: every request of sequence at most sent may have reached the
	// peer; the rest have not (TCP: they are still in the write buffer).
	sent  uint64
	timed int // slots with a deadline, so the sweep can skip the link
}

func (k *core) init(peer string, inflightMax int) {
	k.peer = peer
	k.tokens = make(chan struct{}, inflightMax)
	k.busy = notSent(peer, ErrBusy)
	k.slots = make([]slot, inflightMax)
	k.free = make([]uint32, inflightMax)
	for i := range k.free {
		k.free[i] = uint32(inflightMax - 1 - i)
	}
}

// acquire takes a token: waiting within ctx if wait, else at once or
// not at all (ErrBusy).
func (k *core) acquire(ctx context.Context, wait bool) error {
	select {
	case k.tokens <- struct{}{}:
		return nil
	default:
	}
	if !wait {
		return k.busy
	}
	select {
	case k.tokens <- struct{}{}:
		return nil
	case <-ctx.Done():
		return notSent(k.peer, wrap(ErrBusy, ctx.Err()))
	}
}

func (k *core) release() { <-k.tokens }

// addLocked gives c a slot and a request id (a token is held for it).
func (k *core) addLocked(c *Call, now time.Time) uint64 {
	n := len(k.free) - 1
	i := k.free[n]
	k.free = k.free[:n]
	k.seq++
	id := k.seq<<idSlotBits | uint64(i)
	s := &k.slots[i]
	s.call, s.id = c, id
	if c.Timeout > 0 {
		s.deadline = now.Add(c.Timeout)
		k.timed++
	}
	c.id = id
	return id
}

// freeLocked empties slot i and gives its token back.
func (k *core) freeLocked(i uint32) *Call {
	s := &k.slots[i]
	c := s.call
	if !s.deadline.IsZero() {
		k.timed--
	}
	*s = slot{}
	k.free = append(k.free, i)
	k.release()
	return c
}

// takeLocked removes and returns the request an answer with this id
// answers, or nil when none waits for it.
func (k *core) takeLocked(id uint64) *Call {
	i := uint32(id & idSlotMask)
	if int(i) >= len(k.slots) || k.slots[i].id != id || k.slots[i].call == nil {
		return nil
	}
	return k.freeLocked(i)
}

// take is takeLocked under mu.
func (k *core) take(id uint64) *Call {
	k.mu.Lock()
	c := k.takeLocked(id)
	k.mu.Unlock()
	return c
}

// cancelLocked removes c if it is still in flight (its waiter gave up) and
// reports whether it was.
func (k *core) cancelLocked(c *Call) bool {
	return k.takeLocked(c.id) == c
}

// failed is a request a link's failure ends.
type failed struct {
	c    *Call
	sent bool
}

// drainLocked removes every request in flight, appending each to out with
// whether it may have been sent.
func (k *core) drainLocked(out []failed) []failed {
	for i := range k.slots {
		if c := k.slots[i].call; c != nil {
			out = append(out, failed{c: c, sent: seqOf(k.slots[i].id) <= k.sent})
			k.freeLocked(uint32(i))
		}
	}
	return out
}

// expiredLocked removes every request whose deadline has passed,
// appending it to out.
func (k *core) expiredLocked(now time.Time, out []*Call) []*Call {
	if k.timed == 0 {
		return out
	}
	for i := range k.slots {
		s := &k.slots[i]
		if s.call != nil && !s.deadline.IsZero() && !now.Before(s.deadline) {
			out = append(out, k.freeLocked(uint32(i)))
		}
	}
	return out
}

// sweep fails the requests whose deadline has passed with ErrTimeout.
func (k *core) sweep(now time.Time, scratch []*Call) []*Call {
	k.mu.Lock()
	scratch = k.expiredLocked(now, scratch[:0])
	k.mu.Unlock()
	for _, c := range scratch {
		c.Done(c, wire.Frame{}, unknown(k.peer, ErrTimeout))
	}
	clear(scratch)
	return scratch
}

// fail completes every request of list with the error cause gives.
func (k *core) fail(list []failed, cause error) {
	for _, f := range list {
		f.c.Done(f.c, wire.Frame{}, lost(k.peer, f.sent, cause))
	}
}
