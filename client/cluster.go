package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// ClusterClient is a client of a Felix cluster: the contract's
// ClusterClient (docs/client-cluster.md). It is given seed addresses,
// learns the other brokers from BROKER_LIST, and keeps one Client per
// broker it has used, dialed when first needed.
//
// Every request goes to the broker that leads its shard when the client
// knows it (learned from DescribeStream, from a cache's Describe and from
// each not_leader redirect, and forgotten when that broker's connection
// fails), else to the broker in use, which forwards it. A broker that cannot be reached is passed
// over for the next one, in order: seeds first, then the brokers learned.
// The configured seeds are never dropped, so a wrong or stale BROKER_LIST
// cannot leave the client with fewer ways in than it started with.
//
// What is retried follows the names of the operations, as on a Client:
// Publish reconnects but never resends, PublishAtLeastOnce resends under
// the RetryPolicy, a Producer resends safely and reports what it could
// not settle. Reads (DescribeStream, a cache Get) are retried; a failure
// no attempt can fix (forbidden, unauthenticated, an offset below
// retention, a malformed or oversized request) is returned at once,
// decided by its wire code alone.
//
// A ClusterClient is safe for concurrent use. Its options are the
// Client's (Option); they apply to every broker's Client.
type ClusterClient struct {
	opts  options
	seeds []string

	mu      sync.Mutex           // guards the fields below; never held with another lock
	brokers []string             // seeds first, then those learned; each once
	ids     map[string]string    // broker id -> address, from BROKER_LIST
	clients map[string]*Client   // by address, made on first use
	inUse   string               // the broker unrouted requests go to
	routes  map[routeKey]string  // a shard's leader's address
	down    map[string]time.Time // when a broker last could not be reached
	places  map[object]placement // what a describe said of a stream or a cache
	subs    map[*ShardedSubscription]struct{}
	closed  bool
}

// ErrNoBroker matches an *UnreachableError: no broker the client knows
// could be reached.
var ErrNoBroker = errors.New("felix/client: no broker reachable")

// UnreachableError names every broker a request tried to reach and why
// each failed. Nothing was sent.
type UnreachableError struct {
	Tried []BrokerFailure
}

// BrokerFailure is one broker that could not be reached.
type BrokerFailure struct {
	Addr string
	Err  error
}

func (e *UnreachableError) Error() string {
	var b strings.Builder
	b.WriteString("felix/client: no broker reachable; tried ")
	for i, f := range e.Tried {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Addr + " (" + f.Err.Error() + ")")
	}
	return b.String()
}

// Unwrap matches ErrNoBroker and ErrNotSent: nothing left the client.
func (e *UnreachableError) Unwrap() []error { return []error{ErrNoBroker, ErrNotSent} }

// DialCluster connects to the first of seeds that answers, asks it which
// brokers the cluster has (BROKER_LIST, when the broker offers it), and
// returns a client that will use all of them. It fails with an
// *UnreachableError when no seed answers, or with a seed's refusal of the
// handshake (unauthenticated, unsupported_version).
func DialCluster(ctx context.Context, seeds []string, opts ...Option) (*ClusterClient, error) {
	c := newClusterClient(seeds, opts)
	if len(c.seeds) == 0 {
		return nil, &ServerError{Code: codeInvalidArgument, Name: codeInvalidArgument.String(),
			Message: "a cluster client needs at least one seed address", Local: true}
	}
	cl, err := c.connect(ctx, "")
	if err != nil {
		return nil, err
	}
	_ = c.refresh(ctx, cl) // a broker without discovery leaves the seeds
	return c, nil
}

func newClusterClient(seeds []string, opts []Option) *ClusterClient {
	c := &ClusterClient{opts: defaultOptions(), ids: map[string]string{}, clients: map[string]*Client{},
		routes: map[routeKey]string{}, down: map[string]time.Time{}, places: map[object]placement{}, subs: map[*ShardedSubscription]struct{}{}}
	for _, o := range opts {
		o(&c.opts)
	}
	c.opts.features |= wire.FeatureDiscovery
	for _, s := range seeds {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(c.seeds, s) {
			c.seeds = append(c.seeds, s)
		}
	}
	c.brokers = slices.Clone(c.seeds)
	return c
}

// Seeds are the addresses DialCluster was given, each once.
func (c *ClusterClient) Seeds() []string { return slices.Clone(c.seeds) }

// Brokers are the addresses the client will try: the seeds, then the
// brokers learned, each once.
func (c *ClusterClient) Brokers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.brokers)
}

// Refresh asks a broker which brokers the cluster has and adds those the
// client did not know. It drops none: a broker that left is passed over
// when it cannot be reached.
func (c *ClusterClient) Refresh(ctx context.Context) error {
	cl, err := c.connect(ctx, "")
	if err != nil {
		return err
	}
	return c.refresh(ctx, cl)
}

func (c *ClusterClient) refresh(ctx context.Context, cl *Client) error {
	var res wire.BrokerListResult
	if err := cl.roundTrip(ctx, &wire.BrokerList{}, &res); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range res.Brokers {
		if b.ID != "" && b.Addr != "" {
			c.ids[b.ID] = b.Addr
		}
		c.addLocked(b.Addr)
	}
	return nil
}

// addLocked adds addr to the brokers to try, after the others.
func (c *ClusterClient) addLocked(addr string) {
	if addr != "" && !slices.Contains(c.brokers, addr) {
		c.brokers = append(c.brokers, addr)
	}
}

// Broker is the Client of one broker of the cluster (addr need not be
// known yet: it is added), for what must reach that broker and no other.
// It is owned by the ClusterClient, which closes it.
func (c *ClusterClient) Broker(addr string) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	c.addLocked(addr)
	return c.clientLocked(addr), nil
}

// clientLocked is addr's Client, made (not dialed) on first use.
func (c *ClusterClient) clientLocked(addr string) *Client {
	cl := c.clients[addr]
	if cl == nil {
		cl = &Client{addr: addr, opts: c.opts, subs: map[*Subscription]struct{}{}}
		c.clients[addr] = cl
	}
	return cl
}

// connect returns the Client of a broker with a live connection: first
// (when it is not ""), else the broker in use, then every other in order.
// A broker that fails is passed over; when every one fails the error is
// an *UnreachableError naming them. A refusal of the handshake is
// returned as is: another broker would refuse the same credential.
func (c *ClusterClient) connect(ctx context.Context, first string) (*Client, error) {
	var tried []BrokerFailure
	for _, addr := range c.order(first) {
		cl, err := c.Broker(addr)
		if err != nil {
			return nil, err
		}
		if _, err = cl.conn(ctx); err == nil {
			c.use(addr)
			return cl, nil
		}
		if refused(err) || ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return nil, err
		}
		c.lost(addr)
		c.mu.Lock()
		c.down[addr] = c.opts.clock.Now()
		c.mu.Unlock()
		tried = append(tried, BrokerFailure{Addr: addr, Err: err})
	}
	return nil, &UnreachableError{Tried: tried}
}

// refused: a broker refused the handshake with a code no other broker
// would answer differently (unauthenticated, unsupported_version).
func refused(err error) bool {
	var se *ServerError
	return errors.As(err, &se) && !se.Retryable()
}

// downFor is how long a broker that could not be reached is tried after
// the others, so that a route to a dead leader (or to an address this
// client cannot speak to) costs one failed dial, not one per request.
const downFor = time.Second

// order is the brokers to try: first, the one in use, then the rest, in
// order; those that could not be reached in the last downFor come last.
func (c *ClusterClient) order(first string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.clock.Now()
	out := make([]string, 0, len(c.brokers)+1)
	var later []string
	add := func(a string) {
		if a == "" || slices.Contains(out, a) || slices.Contains(later, a) {
			return
		}
		if t, ok := c.down[a]; ok && now.Sub(t) < downFor {
			later = append(later, a)
			return
		}
		out = append(out, a)
	}
	add(first)
	add(c.inUse)
	for _, a := range c.brokers {
		add(a)
	}
	return append(out, later...)
}

// use makes addr the broker unrouted requests go to, unless one is.
func (c *ClusterClient) use(addr string) {
	c.mu.Lock()
	if c.inUse == "" {
		c.inUse = addr
	}
	delete(c.down, addr)
	c.mu.Unlock()
}

// lost forgets what leads through addr: its connection failed. The next
// unrouted request picks another broker, and the next request for a shard
// it led describes that shard's stream or cache again, to find the
// leader that replaces it.
func (c *ClusterClient) lost(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inUse == addr {
		c.inUse = ""
	}
	for k, a := range c.routes {
		if a == addr {
			delete(c.routes, k)
			delete(c.places, k.obj)
		}
	}
}

// Close closes every broker's Client and the sharded subscriptions; later
// calls fail with ErrClosed. Closing twice is harmless.
func (c *ClusterClient) Close() error {
	c.mu.Lock()
	c.closed = true
	clients := make([]*Client, 0, len(c.clients))
	for _, cl := range c.clients {
		clients = append(clients, cl)
	}
	subs := make([]*ShardedSubscription, 0, len(c.subs))
	for s := range c.subs {
		subs = append(subs, s)
	}
	c.mu.Unlock()
	for _, s := range subs {
		_ = s.Close()
	}
	for _, cl := range clients {
		_ = cl.Close()
	}
	return nil
}
