package peer

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// envelope is one message in the network's queue.
type envelope struct {
	seq    uint64 // send order, network-wide
	rank   uint64 // delivery order among messages due together: seq*2, or less when reordered
	due    time.Time
	from   string
	to     string
	answer bool
	link   *memLink // the asking broker's link: its requests, its epoch
	epoch  uint64   // the link's epoch when sent: a Disconnect loses the older ones
	frame  []byte
}

var envelopes = sync.Pool{New: func() any { return new(envelope) }}

func putEnvelope(e *envelope) {
	frame := e.frame[:0]
	*e = envelope{frame: frame}
	envelopes.Put(e)
}

// Delivery describes a message in the queue, for a test or a simulator
// choosing what to deliver.
type Delivery struct {
	Seq       uint64 // what Deliver and Drop take
	From, To  string
	Answer    bool // an answer (To asked), not a request
	Type      wire.Type
	RequestID uint64
	Bytes     int
	Due       time.Time
}

// send queues frame (with its request id set to id) from -> to, as that
// direction's faults say.
func (n *Network) send(l *memLink, from, to string, answer bool, epoch uint64, frame []byte, id uint64) {
	n.mu.Lock()
	f := n.faults[route{from, to}]
	if n.closed || f.Cut || n.roll(f.Drop) {
		n.mu.Unlock()
		return
	}
	copies := 1
	if n.roll(f.Duplicate) {
		copies = 2
	}
	now := time.Now()
	for range copies {
		e := envelopes.Get().(*envelope)
		e.from, e.to, e.answer, e.link, e.epoch = from, to, answer, l, epoch
		e.frame = appendWithID(e.frame[:0], frame, id)
		n.seq++
		e.seq, e.rank, e.due = n.seq, n.seq<<1, now.Add(f.Delay)
		if prev := n.lastOn(from, to); prev != nil && n.roll(f.Reorder) {
			e.rank, e.due = prev.rank-1, prev.due
		}
		n.queue = append(n.queue, e)
	}
	n.mu.Unlock()
	n.signal()
}

func (n *Network) roll(p float64) bool { return p > 0 && n.rng.Float64() < p }

// lastOn is the message sent last from -> to that is still queued.
func (n *Network) lastOn(from, to string) *envelope {
	for i := len(n.queue) - 1; i >= 0; i-- {
		if e := n.queue[i]; e.from == from && e.to == to {
			return e
		}
	}
	return nil
}

// before orders deliveries: the earliest due, then by rank, then by send.
func before(a, b *envelope) int {
	if c := a.due.Compare(b.due); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.seq, b.seq))
}

// nextLocked removes and returns the first message in delivery order that
// is not held, if it is due at now; else it returns how long until it is
// (0: nothing to wait for).
func (n *Network) nextLocked(now time.Time) (*envelope, time.Duration) {
	first := -1
	for i, e := range n.queue {
		if !n.heldLocked(e) && (first < 0 || before(e, n.queue[first]) < 0) {
			first = i
		}
	}
	if first < 0 {
		return nil, 0
	}
	if e := n.queue[first]; e.due.After(now) {
		return nil, e.due.Sub(now)
	}
	return n.removeLocked(first), 0
}

func (n *Network) removeLocked(i int) *envelope {
	e := n.queue[i]
	n.queue = slices.Delete(n.queue, i, i+1)
	return e
}

func (n *Network) findLocked(seq uint64) int {
	return slices.IndexFunc(n.queue, func(e *envelope) bool { return e.seq == seq })
}

// Pending lists the queued messages, held ones included, in the order
// they would be delivered.
func (n *Network) Pending() []Delivery {
	n.mu.Lock()
	q := slices.Clone(n.queue)
	n.mu.Unlock()
	slices.SortFunc(q, before)
	out := make([]Delivery, len(q))
	for i, e := range q {
		f, _, _ := (&wire.Reader{Limits: wire.Limits{FrameBytesMax: n.opts.FrameBytesMax}}).Next(e.frame)
		out[i] = Delivery{Seq: e.seq, From: e.from, To: e.to, Answer: e.answer, Type: f.Type,
			RequestID: f.RequestID, Bytes: len(e.frame), Due: e.due}
	}
	return out
}

// Deliver delivers the queued message seq now, due or held or not, and reports
// whether it was queued. The handler it reaches (or the request's Done)
// runs on the caller's goroutine.
func (n *Network) Deliver(seq uint64) bool {
	n.mu.Lock()
	i := n.findLocked(seq)
	if i < 0 {
		n.mu.Unlock()
		return false
	}
	e := n.removeLocked(i)
	n.mu.Unlock()
	n.deliver(e)
	return true
}

// DeliverNext delivers the first message in delivery order that is due and
// not held, and reports whether there was one.
func (n *Network) DeliverNext() bool {
	n.mu.Lock()
	e, _ := n.nextLocked(time.Now())
	n.mu.Unlock()
	if e == nil {
		return false
	}
	n.deliver(e)
	return true
}

// drainMessagesMax bounds one Drain: handlers that answer each other for
// ever must not hang a test.
const drainMessagesMax = 1 << 20

// Drain delivers due messages, those they cause included, until none is
// due; it returns how many it delivered.
func (n *Network) Drain() int {
	for i := range drainMessagesMax {
		if !n.DeliverNext() {
			return i
		}
	}
	panic("felix/peer: Drain delivered 2^20 messages and more keep coming: brokers that answer each other for ever")
}

// Drop takes the queued message seq out unsent and reports whether it was
// queued.
func (n *Network) Drop(seq uint64) bool {
	n.mu.Lock()
	i := n.findLocked(seq)
	var e *envelope
	if i >= 0 {
		e = n.removeLocked(i)
	}
	n.mu.Unlock()
	if e != nil {
		putEnvelope(e)
	}
	return e != nil
}

// deliver hands e to its broker unless its direction is cut now, its
// broker is gone, or its connection was reset since it was sent.
func (n *Network) deliver(e *envelope) {
	defer putEnvelope(e)
	n.mu.Lock()
	cut := n.faults[route{e.from, e.to}].Cut
	dst := n.members[e.to]
	n.mu.Unlock()
	if cut || dst == nil {
		return
	}
	if e.answer {
		e.link.answered(e)
		return
	}
	e.link.served(dst, e)
}

// deliverer delivers each message once it is due (automatic mode).
func (n *Network) deliverer() {
	defer n.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		n.mu.Lock()
		e, wait := n.nextLocked(time.Now())
		n.mu.Unlock()
		if e != nil {
			n.deliver(e)
			continue
		}
		var due <-chan time.Time
		if wait > 0 {
			timer.Reset(wait)
			due = timer.C
		}
		select {
		case <-n.wake:
		case <-due:
		case <-n.stop:
			timer.Stop()
			return
		}
		timer.Stop()
	}
}
