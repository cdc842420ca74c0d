package producer

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/engine"
)

// ID names a producer: the number a broker issued and that broker's epoch
// (its incarnation). A broker answers only the IDs it issued since it
// started: any other epoch is unknown.
type ID struct {
	Producer uint64
	Epoch    uint64
}

// Defaults for the zero fields of Options.
const (
	DefaultIdleTimeout  = 30 * time.Minute
	DefaultProducersMax = 100_000
	DefaultInFlightMax  = 5
	// InFlightLimit bounds Options.InFlightMax.
	InFlightLimit = 64
)

// Options configure a Manager.
type Options struct {
	// IdleTimeout forgets a producer that has not published for this long;
	// it is then unknown.
	IdleTimeout time.Duration
	// ProducersMax bounds the live producers; Register refuses beyond it.
	ProducersMax int
	// InFlightMax is how many batches of one producer on one shard may be
	// unacknowledged at once, and so how many the broker remembers there
	// (a re-send of any batch the producer can still be waiting for is
	// answered from memory).
	InFlightMax int
	// Epoch is this broker's incarnation; 0 draws a random one. Two
	// incarnations must never share an epoch, or a producer of the first
	// could be taken for one of the second.
	Epoch uint64
	Now   func() time.Time
}

func (o Options) withDefaults() Options {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.ProducersMax <= 0 {
		o.ProducersMax = DefaultProducersMax
	}
	if o.InFlightMax <= 0 {
		o.InFlightMax = DefaultInFlightMax
	}
	o.InFlightMax = min(o.InFlightMax, InFlightLimit)
	for o.Epoch == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.Epoch = binary.LittleEndian.Uint64(b[:])
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Manager is one broker's idempotent producers: the IDs it issued and, per
// producer and shard, the next sequence and the last InFlightMax batches'
// outcomes. Safe for concurrent use.
type Manager struct {
	opts  Options
	owner engine.Ownership
	ids   atomic.Uint64

	mu        sync.RWMutex // guards producers and lastSweep
	producers map[uint64]*producer
	lastSweep int64

	counters counters

	// watched holds a shardWatch per open shard a batch reached (by
	// *engine.Shard): the shard's stop forgets its producers (forget.go).
	watched sync.Map
}

// New returns a Manager for the engine's shards; it asks the engine's
// Ownership before answering any batch.
func New(e *engine.Engine, opts Options) *Manager {
	o := opts.withDefaults()
	return &Manager{opts: o, owner: e.Owner(), producers: map[uint64]*producer{}, lastSweep: o.Now().UnixNano()}
}

// Epoch is this broker's incarnation, carried by every ID it issues.
func (m *Manager) Epoch() uint64 { return m.opts.Epoch }

// Register issues a producer ID. It forgets idle producers first when it
// has not done so for a quarter of IdleTimeout, or when ProducersMax are
// live; ErrTooManyProducers when they still are.
func (m *Manager) Register() (ID, error) {
	now := m.opts.Now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	if now-m.lastSweep >= int64(m.opts.IdleTimeout/4) || len(m.producers) >= m.opts.ProducersMax {
		m.sweepLocked(now)
	}
	if len(m.producers) >= m.opts.ProducersMax {
		return ID{}, ErrTooManyProducers
	}
	p := &producer{id: m.ids.Add(1)}
	p.lastUsed.Store(now)
	m.producers[p.id] = p
	m.counters.registered.Add(1)
	return ID{Producer: p.id, Epoch: m.opts.Epoch}, nil
}

// Unregister forgets a producer at its own request.
func (m *Manager) Unregister(id ID) {
	if id.Epoch != m.opts.Epoch {
		return
	}
	m.mu.Lock()
	delete(m.producers, id.Producer)
	m.mu.Unlock()
}

// ExpireIdle forgets every producer idle for IdleTimeout and returns how
// many it forgot. Register calls it on its own; a broker may also call it
// from a timer.
func (m *Manager) ExpireIdle() int {
	now := m.opts.Now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sweepLocked(now)
}

func (m *Manager) sweepLocked(now int64) int {
	m.lastSweep = now
	n := 0
	for id, p := range m.producers {
		if m.idle(p, now) {
			delete(m.producers, id)
			n++
		}
	}
	m.counters.expired.Add(uint64(n))
	return n
}

func (m *Manager) idle(p *producer, now int64) bool {
	return now-p.lastUsed.Load() >= int64(m.opts.IdleTimeout)
}

// ForgetShard drops every producer's state for one shard: should this
// broker lead it again, it must not answer a re-sent batch from memory the
// log it then holds may contradict; those producers are unknown there
// instead. It runs by itself when a shard a batch reached stops here
// (forget.go); the cluster layer calls it too when this broker stops
// leading a shard it still holds (a replica demoted to follower).
func (m *Manager) ForgetShard(s *engine.Stream, shard int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, p := range m.producers {
		p.forget(shardKey{stream: s, shard: shard})
	}
}

// lookup returns the live producer id names, nil when it is unknown here,
// and marks it used.
func (m *Manager) lookup(id ID, now int64) *producer {
	if id.Epoch != m.opts.Epoch {
		return nil
	}
	m.mu.RLock()
	p := m.producers[id.Producer]
	m.mu.RUnlock()
	if p == nil || m.idle(p, now) {
		return nil
	}
	p.lastUsed.Store(now)
	return p
}

// Producers is how many producers are live (idle ones not yet swept
// included).
func (m *Manager) Producers() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.producers)
}
