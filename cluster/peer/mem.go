package peer

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Network is an in-memory network of brokers, for tests and the
// deterministic simulator: every message (a request, an answer) goes
// through one queue that the Network delivers from, in order as each
// becomes due (NetworkOptions.Manual false), or that the test or the
// simulator drains itself in the order it chooses (Pending, Deliver,
// DeliverNext, Drop). A link's direction can be cut, delayed, or made to
// drop, duplicate or reorder its messages; Disconnect breaks a connection
// as a TCP reset would; Freeze holds every message of a broker until Thaw.
// It runs inside a testing/synctest bubble (create it there): its only
// waits are channels and timers.
//
// Faults are decided when a message is sent, from a random source seeded
// by NetworkOptions.Seed, in send order; a cut is checked again when it is
// delivered. The handshake is no message: it settles on a link's first
// request, and again after Disconnect, whatever the faults.
type Network struct {
	opts NetworkOptions

	mu      sync.Mutex // guards everything below; never held while calling into a broker
	members map[string]*Mem
	faults  map[route]Faults
	frozen  map[string]bool // brokers whose messages, both ways, are held
	queue   []*envelope     // sent, not yet delivered or dropped, in send order
	seq     uint64
	rng     *rand.Rand
	closed  bool

	wake chan struct{} // capacity 1: something was queued (the deliverer's)
	stop chan struct{} // closed by Close
	wg   sync.WaitGroup
}

// NetworkOptions configure a Network; zero fields take their defaults.
type NetworkOptions struct {
	// Manual: nothing is delivered until the test says what (Deliver,
	// DeliverNext, Drain). Otherwise a goroutine delivers each message
	// once it is due, the earliest first, in send order among equals.
	Manual bool
	// Seed seeds the drop, duplicate and reorder decisions.
	Seed uint64
	// FrameBytesMax and InflightMax are every broker's, as in Config.
	FrameBytesMax int
	InflightMax   int
	// TimeoutTick is how often Call.Timeout is checked (default 5 ms).
	TimeoutTick time.Duration
}

// Faults are what a direction of a link does to the messages sent on it.
type Faults struct {
	Cut       bool          // every message is lost
	Hold      bool          // every message waits in the queue, until the fault is lifted
	Delay     time.Duration // each message is due this long after it is sent
	Drop      float64       // the probability that a message is lost
	Duplicate float64       // ... that it is delivered twice
	Reorder   float64       // ... that it overtakes the message sent before it on this direction
}

type route struct{ from, to string }

// NewNetwork returns an empty network; in automatic mode its deliverer is
// running.
func NewNetwork(opts NetworkOptions) *Network {
	opts.FrameBytesMax = orInt(opts.FrameBytesMax, DefaultFrameBytesMax)
	opts.InflightMax = orInt(min(opts.InflightMax, InflightMaxCeiling), DefaultInflightMax)
	opts.TimeoutTick = orDur(opts.TimeoutTick, 5*time.Millisecond)
	n := &Network{opts: opts, members: map[string]*Mem{}, faults: map[route]Faults{}, frozen: map[string]bool{},
		rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), wake: make(chan struct{}, 1), stop: make(chan struct{})}
	n.wg.Add(1)
	go n.sweeper()
	if !opts.Manual {
		n.wg.Add(1)
		go n.deliverer()
	}
	return n
}

// Join adds a broker to the network and returns its transport. An id
// already joined and not closed is refused; a closed one may join again
// (a restarted broker: its old links are gone).
func (n *Network) Join(id string) (*Mem, error) { return n.join(id, nil) }

func (n *Network) join(id string, hook func(*speaks)) (*Mem, error) {
	m := newMem(n, id, hook)
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.closed:
		return nil, ErrClosed
	case id == "" || len(id) > 255:
		return nil, fmt.Errorf("%w: broker id %q", errConfig, id)
	case n.members[id] != nil:
		return nil, fmt.Errorf("%w: broker %q has joined already", errConfig, id)
	}
	n.members[id] = m
	return m, nil
}

func (n *Network) member(id string) *Mem {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.members[id]
}

// leave removes m, if it is still the member under its id.
func (n *Network) leave(m *Mem) []*Mem {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.members[m.me.id] == m {
		delete(n.members, m.me.id)
	}
	others := make([]*Mem, 0, len(n.members))
	for _, o := range n.members {
		others = append(others, o)
	}
	return others
}

// SetFaults sets what the direction from -> to does to its messages.
func (n *Network) SetFaults(from, to string, f Faults) {
	n.mu.Lock()
	if f == (Faults{}) {
		delete(n.faults, route{from, to})
	} else {
		n.faults[route{from, to}] = f
	}
	n.mu.Unlock()
	n.signal() // a hold may be lifted
}

// Freeze holds every message to and from broker id in the queue, as a
// stopped process (SIGSTOP) would leave them: nothing is lost, nothing
// is delivered, until Thaw. Only the network freezes: the broker's own
// goroutines and timers run on.
func (n *Network) Freeze(id string) { n.setFrozen(id, true) }

// Thaw lets a frozen broker's messages go, in their order.
func (n *Network) Thaw(id string) { n.setFrozen(id, false) }

func (n *Network) setFrozen(id string, frozen bool) {
	n.mu.Lock()
	if frozen {
		n.frozen[id] = true
	} else {
		delete(n.frozen, id)
	}
	n.mu.Unlock()
	n.signal()
}

// heldLocked reports whether e must wait in the queue.
func (n *Network) heldLocked(e *envelope) bool {
	return n.frozen[e.from] || n.frozen[e.to] || n.faults[route{e.from, e.to}].Hold
}

// signal wakes the deliverer.
func (n *Network) signal() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Cut loses every message between a and b, both ways, until Heal: a
// partition. Nobody is told: requests end by their Timeout or ctx.
func (n *Network) Cut(a, b string) {
	n.CutOneWay(a, b)
	n.CutOneWay(b, a)
}

// CutOneWay loses every message from `from` to `to`; the other way still
// works (so `to`'s requests reach `from`, and their answers are lost).
func (n *Network) CutOneWay(from, to string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f := n.faults[route{from, to}]
	f.Cut = true
	n.faults[route{from, to}] = f
}

// Heal clears every fault between a and b, both ways.
func (n *Network) Heal(a, b string) {
	n.SetFaults(a, b, Faults{})
	n.SetFaults(b, a, Faults{})
}

// Disconnect breaks the connections between a and b as a reset would:
// their requests in flight fail at once (ErrConnectionLost,
// ErrOutcomeUnknown), their messages still queued are lost, and the next
// request handshakes again.
func (n *Network) Disconnect(a, b string) {
	for _, p := range [][2]string{{a, b}, {b, a}} {
		if m := n.member(p[0]); m != nil {
			m.resetLink(p[1], ErrConnectionLost)
		}
	}
}

// Close closes every broker and stops the network's goroutines.
func (n *Network) Close() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.closed = true
	members := make([]*Mem, 0, len(n.members))
	for _, m := range n.members {
		members = append(members, m)
	}
	queue := n.queue
	n.queue = nil
	n.mu.Unlock()
	close(n.stop)
	for _, m := range members {
		_ = m.Close()
	}
	for _, e := range queue {
		putEnvelope(e)
	}
	n.wg.Wait()
}

// sweeper fails requests past their Timeout, every TimeoutTick.
func (n *Network) sweeper() {
	defer n.wg.Done()
	tick := time.NewTicker(n.opts.TimeoutTick)
	defer tick.Stop()
	var links []*memLink
	var scratch []*Call
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		links = n.allLinks(links[:0])
		for _, l := range links {
			scratch = l.core.sweep(now, scratch)
		}
		clear(links)
	}
}

func (n *Network) allLinks(out []*memLink) []*memLink {
	n.mu.Lock()
	members := make([]*Mem, 0, len(n.members))
	for _, m := range n.members {
		members = append(members, m)
	}
	n.mu.Unlock()
	for _, m := range members {
		out = m.appendLinks(out)
	}
	return out
}
