package client

import (
	"context"
	"errors"
	"time"
)

// object names a stream or a cache: what a describe tells the shards of.
type object struct {
	cache     bool
	tenant    string
	namespace string
	name      string
}

func streamObject(s Stream) object {
	return object{tenant: s.Tenant, namespace: s.Namespace, name: s.Name}
}

func cacheObject(n CacheName) object {
	return object{cache: true, tenant: n.Tenant, namespace: n.Namespace, name: n.Name}
}

// routeKey names one shard of a stream or a cache.
type routeKey struct {
	obj   object
	shard int
}

func streamShard(s Stream, shard int) routeKey   { return routeKey{obj: streamObject(s), shard: shard} }
func cacheShard(n CacheName, shard int) routeKey { return routeKey{obj: cacheObject(n), shard: shard} }

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

func toCacheShard(n CacheName, shard int) target {
	return target{key: cacheShard(n, shard), routed: true}
}

// leader is the address t's leader is known at, or "" (the broker in use).
// A shard whose leader is not known is looked up once, by describing its
// stream or cache.
func (c *ClusterClient) leader(ctx context.Context, t target) string {
	if !t.routed {
		return ""
	}
	c.mu.Lock()
	addr, ok := c.routes[t.key]
	p := c.places[t.key.obj]
	c.mu.Unlock()
	if ok || c.opts.clock.Now().Sub(p.at) < describeRetry {
		return addr
	}
	c.describe(ctx, t.key.obj)
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

// placement is what the client knows of a stream's or a cache's shards:
// their count (0: unknown), and when it was last described (or failed to
// be).
type placement struct {
	shards int
	at     time.Time
}

// describeRetry is how long an object is not described again: one whose
// describe failed is routed through the broker in use meanwhile (a
// credential that may publish but not describe costs one describe a
// second, not one a publish), and a shard whose leader is not known is
// sent to the broker in use, which forwards it or names the leader.
const describeRetry = time.Second

// shardCount is the object's shard count, described on first use; 0 when
// it could not be learned (the broker in use then routes).
func (c *ClusterClient) shardCount(ctx context.Context, o object) int {
	c.mu.Lock()
	p, ok := c.places[o]
	c.mu.Unlock()
	if ok && (p.shards > 0 || c.opts.clock.Now().Sub(p.at) < describeRetry) {
		return p.shards
	}
	return c.describe(ctx, o)
}

// describe asks a broker for the object's shards and their leaders
// (DescribeStream, Cache.Describe), and remembers them. A failure (a
// credential that may publish but not describe, a broker that has not
// seen the object yet, one that does not serve CACHE_DESCRIBE) is
// remembered for describeRetry.
func (c *ClusterClient) describe(ctx context.Context, o object) int {
	cl, err := c.connect(ctx, "")
	var leaders []shardLeader
	if err == nil {
		leaders, err = describeAt(ctx, cl, o)
	}
	if err != nil {
		if ctx.Err() == nil {
			c.mu.Lock()
			c.places[o] = placement{at: c.opts.clock.Now()}
			c.mu.Unlock()
		}
		return 0
	}
	c.rememberLeaders(o, leaders)
	return len(leaders)
}

// shardLeader is one shard's leader address as a describe gave it.
type shardLeader struct {
	shard int
	addr  string
}

// describeAt describes o at cl: its shards' leaders, in shard order.
func describeAt(ctx context.Context, cl *Client, o object) ([]shardLeader, error) {
	var out []shardLeader
	if o.cache {
		info, err := cl.Cache(CacheName{Tenant: o.tenant, Namespace: o.namespace, Name: o.name}).Describe(ctx)
		for _, sh := range info.Shards {
			out = append(out, shardLeader{shard: sh.Shard, addr: sh.LeaderAddr})
		}
		return out, err
	}
	info, err := cl.DescribeStream(ctx, Stream{Tenant: o.tenant, Namespace: o.namespace, Name: o.name})
	for _, sh := range info.Shards {
		out = append(out, shardLeader{shard: sh.Shard, addr: sh.LeaderAddr})
	}
	return out, err
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
			delete(c.places, t.key.obj)
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
	leaders := make([]shardLeader, 0, len(info.Shards))
	for _, sh := range info.Shards {
		leaders = append(leaders, shardLeader{shard: sh.Shard, addr: sh.LeaderAddr})
	}
	c.rememberLeaders(streamObject(info.Stream), leaders)
}

// rememberLeaders routes o's shards to the leaders a describe named.
func (c *ClusterClient) rememberLeaders(o object, leaders []shardLeader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.places[o] = placement{shards: len(leaders), at: c.opts.clock.Now()}
	for _, sh := range leaders {
		k := routeKey{obj: o, shard: sh.shard}
		if sh.addr != "" {
			c.routes[k] = sh.addr
			c.addLocked(sh.addr)
		} else {
			delete(c.routes, k)
		}
	}
}

// forget drops what the client knows of an object's shards: a stream or
// a cache deleted.
func (c *ClusterClient) forget(o object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.places[o].shards
	delete(c.places, o)
	for i := range n {
		delete(c.routes, routeKey{obj: o, shard: i})
	}
}
