package netio

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// routes is the fake cluster view of the forwarding tests, one per broker:
// shard i of every stream and cache is led by leaders[i], whose client
// address is addrs[broker]. It is both the broker's engine.Ownership and
// its Router.
type routes struct {
	self string

	mu      sync.Mutex
	leaders []string
	addrs   map[string]string
}

func newRoutes(self string, leaders ...string) *routes {
	return &routes{self: self, leaders: leaders, addrs: map[string]string{}}
}

func (r *routes) leader(shard int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if shard < len(r.leaders) {
		return r.leaders[shard]
	}
	return ""
}

func (r *routes) Leader(_ engine.StreamID, shard int) (bool, string) {
	b := r.leader(shard)
	if b == r.self {
		return true, ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return false, r.addrs[b]
}

func (r *routes) LeaderBroker(_ engine.StreamID, shard int) (string, bool) {
	b := r.leader(shard)
	return b, b != "" && b != r.self
}

func (r *routes) setAddr(broker, addr string) {
	r.mu.Lock()
	r.addrs[broker] = addr
	r.mu.Unlock()
}

func (r *routes) setLeaders(leaders ...string) {
	r.mu.Lock()
	r.leaders = leaders
	r.mu.Unlock()
}

// member is one broker of a forwarding test: a netio Server over a memory
// engine and a durable cache store on a MemFS, joined to the peer network
// under its id, forwarding through its own Forwarder.
type member struct {
	t      testing.TB
	id     string
	routes *routes
	e      *engine.Engine
	store  *cache.Store
	s      *Server
	fwd    *Forwarder
	peers  *peer.Mem
	clock  *fakeClock
}

// memberOptions tune a member before it starts.
type memberOptions struct {
	timeout time.Duration // the Forwarder's; default 5 s
	tune    func(*member, *Config)
}

// cluster is the network and its members.
type cluster struct {
	t   testing.TB
	net *peer.Network
	m   map[string]*member
}

// newCluster starts brokers "a" and "b" on one in-memory network; shard 0
// is led by "b", shard 1 by "a".
func newCluster(t testing.TB, opts ...func(id string, o *memberOptions)) *cluster {
	t.Helper()
	n := peer.NewNetwork(peer.NetworkOptions{TimeoutTick: time.Millisecond})
	t.Cleanup(n.Close) // after the servers stop: cleanups run last first
	c := &cluster{t: t, net: n, m: map[string]*member{}}
	for _, id := range []string{"a", "b"} {
		var o memberOptions
		for _, f := range opts {
			f(id, &o)
		}
		c.m[id] = c.start(id, newRoutes(id, "b", "a"), o)
	}
	for _, m := range c.m {
		for id, o := range c.m {
			m.routes.setAddr(id, o.s.Addr().String())
		}
	}
	return c
}

func (c *cluster) start(id string, r *routes, o memberOptions) *member {
	t := c.t
	t.Helper()
	mem, err := c.net.Join(id)
	if err != nil {
		t.Fatal(err)
	}
	m := &member{t: t, id: id, routes: r, peers: mem, clock: newFakeClock()}
	if o.timeout == 0 {
		o.timeout = 5 * time.Second
	}
	if m.fwd, err = NewForwarder(ForwarderConfig{Peers: mem, Router: r, Timeout: o.timeout}); err != nil {
		t.Fatal(err)
	}
	if m.e, err = engine.Open(engine.Options{Owner: r, Forward: m.fwd}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.e.Close() })
	m.store, err = cache.Open(cache.Options{FS: vfs.NewMem(), Dir: "/data", CompactEvery: -1, Now: m.clock.Now, Owner: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.store.Close() })
	cfg := Config{Addr: "127.0.0.1:0", Engine: m.e, Owner: r, Caches: m.store, Forwarder: m.fwd,
		Multicore: true, EventLoops: 2, BrokerID: id, Now: m.clock.Now}
	if o.tune != nil {
		o.tune(m, &cfg)
	}
	if m.s, err = NewServer(cfg); err != nil {
		t.Fatal(err)
	}
	mem.Handle(m.s)
	if err := m.s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.stop() })
	return m
}

func (m *member) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := m.s.Stop(ctx); err != nil && !errors.Is(err, ErrNotStarted) {
		m.t.Errorf("stop %s: %v", m.id, err)
	}
}

// createStream makes a stream of two shards on both brokers (the catalog
// is the cluster's; here each engine keeps its own copy).
func (c *cluster) createStream(name string) wire.StreamRef {
	c.t.Helper()
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: name}
	for _, m := range c.m {
		if _, err := m.e.CreateStream(id, engine.StreamConfig{Shards: 2}); err != nil {
			c.t.Fatal(err)
		}
	}
	return wireRef(id)
}

// createCache makes a durable cache of two shards on both brokers.
func (c *cluster) createCache(name string) wire.CacheRef {
	c.t.Helper()
	id := cache.ID{Tenant: "acme", Namespace: "prod", Name: name}
	for _, m := range c.m {
		if _, err := m.store.Create(id, cache.Config{Shards: 2, Durable: true}); err != nil {
			c.t.Fatal(err)
		}
	}
	return wire.CacheRef{Tenant: []byte(id.Tenant), Namespace: []byte(id.Namespace), Cache: []byte(id.Name)}
}

// client dials a member and handshakes with every feature and the token.
func (m *member) client(token []byte) *rawClient {
	m.t.Helper()
	c := dialRaw(m.t, m.s.Addr().String())
	c.hello(wire.FeaturesAll, token)
	return c
}

// shardEnd is the next offset of the stream's shard in this broker's log.
func (m *member) shardEnd(ref wire.StreamRef, shard int) int64 {
	m.t.Helper()
	st, err := m.e.Stream(idOf(ref))
	if err != nil {
		m.t.Fatal(err)
	}
	sh, err := st.Shard(shard)
	if err != nil {
		m.t.Fatal(err)
	}
	return sh.End()
}

// keyOn is a key that lands on shard of a two-shard stream or cache, the
// n-th such.
func keyOn(shard, n int) []byte {
	for i := 0; ; i++ {
		k := []byte(fmt.Sprintf("key-%d", i))
		if engine.ShardFor(k, 2) == shard {
			if n == 0 {
				return k
			}
			n--
		}
	}
}

// publishKeyed sends a keyed PUBLISH_BATCH asking for one ack.
func (c *rawClient) publishKeyed(ref wire.StreamRef, recs []wire.Record) wire.Frame {
	return c.request(func(id uint64) []byte { return wire.AppendPublishBatch(nil, id, ref, wire.AckPerBatch, recs) })
}

// peerCall sends a frame from one broker to another over the peer network,
// as a broker's forwarder would, and returns the answer.
func (c *cluster) peerCall(from, to string, frame []byte) wire.Frame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	f, err := c.m[from].peers.Call(ctx, to, frame, nil)
	if err != nil {
		c.t.Fatalf("peer call %s -> %s: %v", from, to, err)
	}
	return f
}
