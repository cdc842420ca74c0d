package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
)

// deliveriesPerStepMax bounds the messages delivered at one instant:
// brokers answering each other for ever must not hang a run.
const deliveriesPerStepMax = 1 << 14

// latencyMax is the most a message waits in the queue without a delay
// fault.
const latencyMax = 2 * time.Millisecond

// timeoutTick is how often the network fails requests past their
// timeout: coprime with the simulator's step, whose multiples it meets
// only after timeoutTick x stepDuration (23 s, past a run's end), so that
// its sweeps do not race the simulator's calls into the brokers.
const timeoutTick = 23003 * time.Microsecond

type route struct{ from, to string }

// linkFaults is what the simulator does to one direction's messages.
type linkFaults struct {
	cut     bool          // lost
	drop    float64       // the probability that one is lost
	delay   time.Duration // added to its latency
	reorder bool          // it may overtake those sent before it
}

// network is the simulator's deliverer over a Manual peer.Network: it
// gives every message a due time when it first sees it, drops what the
// faults say, holds what a frozen broker sends or is sent, and delivers
// the due ones one at a time in an order drawn from the seed, each
// route in send order unless it reorders. Used by the simulator's
// goroutine only, but for the leases (leaseOf), read by the brokers'
// goroutines under mu.
type network struct {
	w   *World
	net *peer.Network
	rng *rand.Rand
	due map[uint64]time.Time // by Delivery.Seq: when it may go
	// rank orders each route's messages: the order the simulator first
	// saw them in, those first seen together in their canonical order
	// (sent at one instant by goroutines the scheduler ran in either
	// order, they count as sent together).
	rank     map[uint64]int64
	rankNext int64
	frozen   map[string]bool
	faults   map[route]linkFaults
	stall    map[string]bool // brokers whose fsyncs are held

	// The heartbeat being delivered to the control plane, and what its
	// grant leased, by (broker, request id), until the answer arrives.
	hbSent  map[heartbeatKey]time.Time
	current heartbeatKey
	grants  map[heartbeatKey][]leaseSeen

	mu     sync.Mutex
	leases map[string]map[int]leaseSeen // by broker, shard: the latest grant delivered
}

// leaseSeen is a grant delivered to a broker: the generation it leases
// and when the heartbeat it answered was sent.
type leaseSeen struct {
	shard int
	gen   uint64
	sent  time.Time
}

func newNetwork(w *World, seed uint64) *network {
	return &network{w: w, net: peer.NewNetwork(peer.NetworkOptions{Manual: true, Seed: seed, TimeoutTick: timeoutTick}), rng: rand.New(rand.NewPCG(seed, 0x6e6574)),
		due: map[uint64]time.Time{}, rank: map[uint64]int64{}, frozen: map[string]bool{}, stall: map[string]bool{}, faults: map[route]linkFaults{},
		hbSent: map[heartbeatKey]time.Time{}, grants: map[heartbeatKey][]leaseSeen{}, leases: map[string]map[int]leaseSeen{}}
}

func (n *network) stalled(broker string) bool { return n.stall[broker] }

func (n *network) Join(id string) (*peer.Mem, error) { return n.net.Join(id) }

// granted notes that the grant the control plane is answering the
// current heartbeat with leases shard at gen.
func (n *network) granted(broker string, shard int, gen uint64) {
	if n.current.broker != broker {
		return
	}
	n.grants[n.current] = append(n.grants[n.current], leaseSeen{shard: shard, gen: gen, sent: n.hbSent[n.current]})
}

// leaseOf is the lease broker holds for shard at gen, as far as the grants
// delivered to it say; ok false: none.
func (n *network) leaseOf(broker string, shard int, gen uint64) (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.leases[broker][shard]
	return l.sent, ok && l.gen == gen
}

func (n *network) leased(broker string, ls []leaseSeen) {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.leases[broker]
	if m == nil {
		m = map[int]leaseSeen{}
		n.leases[broker] = m
	}
	for _, l := range ls {
		if cur, ok := m[l.shard]; !ok || l.gen > cur.gen || (l.gen == cur.gen && l.sent.After(cur.sent)) {
			m[l.shard] = l
		}
	}
}

// canonical orders the messages seen at one instant whatever order the
// brokers' goroutines sent them in: by route and kind, then size.
func canonical(a, b peer.Delivery) int {
	return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(boolInt(a.Answer), boolInt(b.Answer)),
		cmp.Compare(a.Type, b.Type), cmp.Compare(a.Bytes, b.Bytes), cmp.Compare(a.RequestID, b.RequestID), cmp.Compare(a.Seq, b.Seq))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// settle delivers every message due now, those their delivery causes
// included, after letting every broker goroutine run to a wait.
func (n *network) settle() {
	for range deliveriesPerStepMax {
		synctest.Wait()
		n.w.inbox.drain()
		if n.w.appended.drain() {
			continue // the leaderships it woke ship before anything else happens
		}
		p, ok := n.pick(n.w.now())
		syncs := n.w.gate.ready(n.stalled)
		if !ok && len(syncs) == 0 {
			return
		}
		if k := n.rng.IntN(len(syncs) + boolInt(ok)); k < len(syncs) {
			n.w.trace.add("sync %s", syncs[k])
			n.w.stats.Syncs++
			n.w.gate.release(syncs[k])
			continue
		}
		n.deliver(p)
	}
	panic("felix/sim: brokers kept sending at one instant past deliveriesPerStepMax")
}

// pick sees the new messages (their latency, their drops) and draws one
// of those due and not held.
func (n *network) pick(now time.Duration) (peer.Delivery, bool) {
	pending := n.net.Pending()
	var fresh []peer.Delivery
	for _, p := range pending {
		if _, seen := n.due[p.Seq]; !seen {
			fresh = append(fresh, p)
		}
	}
	slices.SortFunc(fresh, canonical)
	for _, p := range fresh {
		f := n.faults[route{p.From, p.To}]
		if f.cut || (f.drop > 0 && n.rng.Float64() < f.drop) {
			n.net.Drop(p.Seq)
			n.w.trace.add("drop %s", describe(p))
			n.w.stats.Dropped++
			continue
		}
		n.due[p.Seq] = time.Now().Add(f.delay + time.Duration(n.rng.Int64N(int64(latencyMax))))
		n.rank[p.Seq] = n.rankNext
		n.rankNext++
	}
	slices.SortStableFunc(pending, func(a, b peer.Delivery) int { return cmp.Compare(n.rank[a.Seq], n.rank[b.Seq]) })
	heads := map[route]bool{}
	var ready []peer.Delivery
	for _, p := range pending { // in rank order: the first of each route is its head
		due, ok := n.due[p.Seq]
		if !ok {
			continue
		}
		r := route{p.From, p.To}
		head := !heads[r]
		heads[r] = true
		if n.frozen[p.From] || n.frozen[p.To] || due.After(time.Now()) || (!head && !n.faults[r].reorder) {
			continue
		}
		ready = append(ready, p)
	}
	if len(ready) == 0 {
		return peer.Delivery{}, false
	}
	slices.SortFunc(ready, canonical)
	return ready[n.rng.IntN(len(ready))], true
}

func (n *network) deliver(p peer.Delivery) {
	delete(n.due, p.Seq)
	delete(n.rank, p.Seq)
	if f := n.faults[route{p.From, p.To}]; f.cut { // cut since it was seen
		n.net.Drop(p.Seq)
		n.w.trace.add("drop %s", describe(p))
		n.w.stats.Dropped++
		return
	}
	n.w.trace.add("deliver %s", describe(p))
	n.w.stats.Delivered++
	key := heartbeatKey{p.From, p.RequestID}
	switch {
	case !p.Answer && p.Type == wire.TypeHeartbeat && p.To == controlID:
		sent := p.Due // Manual and no network delay: when it was sent
		n.hbSent[key] = sent
		n.current = key
		n.net.Deliver(p.Seq)
		n.current = heartbeatKey{}
		delete(n.hbSent, key)
		return
	case p.Answer && p.From == controlID && p.Type == wire.TypeLeaseGrant:
		key = heartbeatKey{p.To, p.RequestID}
		if g, ok := n.grants[key]; ok {
			delete(n.grants, key)
			n.leased(p.To, g)
		}
	}
	n.net.Deliver(p.Seq)
}

func describe(p peer.Delivery) string {
	kind := "req"
	if p.Answer {
		kind = "ans"
	}
	return p.From + ">" + p.To + " " + kind + " " + p.Type.String() + " " + itoa(p.Bytes)
}
