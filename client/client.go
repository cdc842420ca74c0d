package client

import (
	"context"
	"sync"
	"sync/atomic"
)

// Client is a connection to one Felix broker. It is safe for concurrent
// use by any number of goroutines: requests from all of them share one
// connection, pipelined, each matched to its answer by request id.
//
// When the connection drops, the requests awaiting answers fail with
// ErrConnectionLost and the subscriptions on it end; the next request dials
// again. Nothing is resent, except by PublishAtLeastOnce.
type Client struct {
	addr string
	opts options
	ids  atomic.Uint64 // request ids, never reused across connections
	dial atomic.Uint64 // connections made, for Stats

	mu      sync.Mutex // guards the fields below
	cur     *conn
	dialing chan struct{} // closed when the dial under way ends; nil if none
	subs    map[*Subscription]struct{}
	closed  bool
}

// Dial connects to the broker at addr (host:port) and performs the
// handshake, within ctx and the dial timeout. A refusal of the handshake
// (unauthenticated, unsupported_version) is a *ServerError.
func Dial(ctx context.Context, addr string, opts ...Option) (*Client, error) {
	c := &Client{addr: addr, opts: defaultOptions(), subs: map[*Subscription]struct{}{}}
	for _, o := range opts {
		o(&c.opts)
	}
	cn, err := dialConn(ctx, addr, &c.opts, &c.ids)
	if err != nil {
		return nil, err
	}
	c.cur = cn
	c.dial.Add(1)
	return c, nil
}

// Addr is the broker's address as given to Dial.
func (c *Client) Addr() string { return c.addr }

// Close ends the connection: requests awaiting answers fail with ErrClosed
// and subscriptions end with it. Later calls fail with ErrClosed. Closing
// twice is harmless.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	cn := c.cur
	c.cur = nil
	subs := make([]*Subscription, 0, len(c.subs))
	for s := range c.subs {
		subs = append(subs, s)
	}
	c.mu.Unlock()
	if cn != nil {
		cn.die(ErrClosed)
	}
	for _, s := range subs {
		s.mu.Lock()
		sc := s.conn
		s.mu.Unlock()
		if sc != nil {
			sc.die(ErrClosed)
		}
	}
	c.closeWatches()
	return nil
}

// open reports ErrClosed once the client is closed.
func (c *Client) open() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return nil
}

// track adds a subscription to those Close ends; untrack removes it.
func (c *Client) track(s *Subscription) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.subs[s] = struct{}{}
	return nil
}

func (c *Client) untrack(s *Subscription) {
	c.mu.Lock()
	delete(c.subs, s)
	c.mu.Unlock()
}

// Session describes the connection in use.
type Session struct {
	BrokerID string
	// Features is what both peers offered: what the client may use.
	Features Features
	// Limits are the broker's: the client encodes within them.
	Limits Limits
}

// Session dials if needed and describes the connection.
func (c *Client) Session(ctx context.Context) (Session, error) {
	cn, err := c.conn(ctx)
	if err != nil {
		return Session{}, err
	}
	return Session{BrokerID: cn.brokerID, Features: Features(cn.features), Limits: limitsFrom(cn.limits)}, nil
}

// Stats are the client's counters.
type Stats struct {
	// Connections counts the connections made for requests, the first
	// included (subscriptions have their own, not counted here).
	Connections   uint64
	Inflight      int // requests awaiting an answer now
	Subscriptions int // subscriptions open now
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	s := Stats{Connections: c.dial.Load()}
	c.mu.Lock()
	cn := c.cur
	s.Subscriptions = len(c.subs)
	c.mu.Unlock()
	if cn != nil {
		s.Inflight = len(cn.inflight)
	}
	return s
}

// conn returns a live connection, dialing a new one if the last died. One
// dial at a time: concurrent callers wait for it.
func (c *Client) conn(ctx context.Context) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, notSent(err)
	}
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if c.cur != nil && c.cur.alive() {
			cn := c.cur
			c.mu.Unlock()
			return cn, nil
		}
		if ch := c.dialing; ch != nil {
			c.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, notSent(ctx.Err())
			}
		}
		ch := make(chan struct{})
		c.dialing = ch
		c.mu.Unlock()
		cn, err := c.redial(ctx)
		close(ch)
		if err != nil {
			return nil, err
		}
		return cn, nil
	}
}

// redial dials a replacement connection; the caller owns c.dialing.
func (c *Client) redial(ctx context.Context) (*conn, error) {
	cn, err := dialConn(ctx, c.addr, &c.opts, &c.ids)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dialing = nil
	if err != nil {
		return nil, err
	}
	if c.closed {
		go cn.die(ErrClosed)
		return nil, ErrClosed
	}
	c.cur = cn
	c.dial.Add(1)
	c.opts.logger.Debug("felix client reconnected", "addr", c.addr, "broker", cn.brokerID)
	return cn, nil
}
