package client

import (
	"context"
	"errors"
	"time"
)

// routeKey names one shard of a stream.
type routeKey struct {
	tenant    string
	namespace string
	name      string
	shard     int
}

func streamShard(s Stream, shard int) routeKey {
	return routeKey{tenant: s.Tenant, namespace: s.Namespace, name: s.Name, shard: shard}
}

// target says where an operation goes: to key's leader when routed and
// the leader is known, else to the broker in use, which forwards what it
// does not lead (a publish, a cache operation) or redirects (a subscribe,
// a watch, a group poll, an idempotent batch).
type target struct {
	key    routeKey
	routed bool
}

var anyBroker = target{}

func toShard(s Stream, shard int) target { return target{key: streamShard(s, shard), routed: true} }

// leader is the address t's leader is known at, or "" (the broker in use).
// A stream shard whose leader is not known is looked up once, by
// describing the stream.
func (c *ClusterClient) leader(ctx context.Context, t target) string {
	if !t.routed {
		return ""
	}
	s := Stream{Tenant: t.key.tenant, Namespace: t.key.namespace, Name: t.key.name}
	c.mu.Lock()
	addr, ok := c.routes[t.key]
	p := c.shards[s]
	c.mu.Unlock()
	if ok || c.opts.clock.Now().Sub(p.at) < describeRetry {
		return addr
	}
	c.describe(ctx, s)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.routes[t.key]
}

// routed is the Client of t's leader (or of the broker in use) when its
// connection is up: the path a steady publish takes, two map reads and
// no lookup.
func (c *ClusterClient) routed(t target) *Client {
	c.mu.Lock()
	addr, ok := c.routes[t.key]
	if !t.routed || !ok {
		addr = c.inUse
	}
	cl := c.clients[addr]
	c.mu.Unlock()
	if cl != nil && cl.live() {
		return cl
	}
	return nil
}

// placement is what the client knows of a stream's shards: their count
// (0: unknown), and when it was last described (or failed to be).
type placement struct {
	shards int
	at     time.Time
}

// describeRetry is how long a stream is not described again: one whose
// describe failed is routed through the broker in use meanwhile (a
// credential that may publish but not describe costs one describe a
// second, not one a publish), and a shard whose leader is not known is
// sent to the broker in use, which forwards it or names the leader.
const describeRetry = time.Second

// shardCount is the stream's shard count, described on first use; 0 when
// it could not be learned (the broker in use then routes).
func (c *ClusterClient) shardCount(ctx context.Context, s Stream) int {
	c.mu.Lock()
	p, ok := c.shards[s]
	c.mu.Unlock()
	if ok && (p.shards > 0 || c.opts.clock.Now().Sub(p.at) < describeRetry) {
		return p.shards
	}
	return c.describe(ctx, s)
}

// describe asks a broker for the stream's shards and their leaders, and
// remembers them. A failure (a credential that may publish but not
// describe, a broker that has not seen the stream yet) is remembered for
// describeRetry.
func (c *ClusterClient) describe(ctx context.Context, s Stream) int {
	cl, err := c.connect(ctx, "")
	var info StreamInfo
	if err == nil {
		info, err = cl.DescribeStream(ctx, s)
	}
	if err != nil {
		if ctx.Err() == nil {
			c.mu.Lock()
			c.shards[s] = placement{at: c.opts.clock.Now()}
			c.mu.Unlock()
		}
		return 0
	}
	c.remember(info)
	return len(info.Shards)
}

// learn reads what a failure says about the cluster: a not_leader names
// the shard's leader (returned, to follow at once) or says none is known;
// a connection that failed, or a broker shutting down, takes its routes
// with it.
func (c *ClusterClient) learn(t target, err error) (redirect string) {
	var fb *fromBroker
	if !errors.As(err, &fb) {
		return ""
	}
	var se *ServerError
	switch {
	case errors.As(err, &se) && se.Code == codeNotLeader:
		c.mu.Lock()
		defer c.mu.Unlock()
		leader := se.Details.LeaderAddr
		c.addLocked(leader)
		if t.routed && (se.Details.Shard == nil || *se.Details.Shard == t.key.shard) {
			if leader != "" {
				c.routes[t.key] = leader
			} else {
				delete(c.routes, t.key)
			}
			delete(c.shards, Stream{Tenant: t.key.tenant, Namespace: t.key.namespace, Name: t.key.name})
		}
		if leader == fb.addr {
			return ""
		}
		return leader
	case errors.Is(err, ErrShuttingDown), se == nil && errors.Is(err, ErrConnectionLost):
		c.lost(fb.addr)
	case se == nil && !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		c.lost(fb.addr) // a dial or a read that failed
	}
	return ""
}

// live reports whether the client's connection is up, without dialing.
func (c *Client) live() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed && c.cur != nil && c.cur.alive()
}

// remember routes by a stream's description.
func (c *ClusterClient) remember(info StreamInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shards[info.Stream] = placement{shards: len(info.Shards), at: c.opts.clock.Now()}
	for _, sh := range info.Shards {
		k := streamShard(info.Stream, int(sh.Shard))
		if sh.LeaderAddr != "" {
			c.routes[k] = sh.LeaderAddr
			c.addLocked(sh.LeaderAddr)
		} else {
			delete(c.routes, k)
		}
	}
}

// forget drops what the client knows of a stream's shards.
func (c *ClusterClient) forget(s Stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.shards[s].shards
	delete(c.shards, s)
	for i := range n {
		delete(c.routes, streamShard(s, i))
	}
}
