package broker

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// A Quorum cache's get at its owner whose key's newest write is not on a
// majority is parked (engine/cache/park.go), never waited for on the
// connection's event loop: three brokers of one event loop each, both
// followers stopped, a put refused no_quorum; the get of its key is
// passed by a PING sent after it on the same connection, another
// connection on that loop is answered meanwhile, and the get is answered
// no_quorum at the publish timeout, or not_leader once the owner's lease
// lapses (the control plane may have stopped with a follower).
func TestAQuorumCacheGetWaitingForACommitHoldsNoEventLoop(t *testing.T) {
	qc := startOneLoopQuorumCacheCluster(t)
	qc.put("k", "v1")
	qc.put("a", "b")
	qc.stopFollowers()
	err := qc.writeOnce(func(c *cache.Cache) error {
		_, err := c.Put([]byte("k"), []byte("v2"), cache.PutOptions{})
		return err
	})
	if !errors.Is(err, wire.CodeNoQuorum) {
		t.Fatalf("a Quorum put with both followers stopped: %v, want no_quorum", err)
	}
	addr := qc.brokers[qc.owner].Addr().String()
	reader, other := dialWire(t, addr), dialWire(t, addr)
	ref := wire.CacheRef{Tenant: []byte(qc.id.Tenant), Namespace: []byte(qc.id.Namespace), Cache: []byte(qc.id.Name)}
	getK := parkedGet(t, reader, ref)
	parked := time.Now()

	other.send(wire.AppendCacheGet(nil, 1, wire.CacheGet{Cache: ref, Key: []byte("a")}))
	if f := other.read(); f.RequestID != 1 || (f.Type != wire.TypeCacheValue && errorCode(f) != wire.CodeNotLeader) {
		t.Fatalf("another connection's get while k's is parked: %v %v, want b (or not_leader, the lease lapsed)", f.Type, errorCode(f))
	}
	if f := reader.read(); f.RequestID != getK {
		t.Fatalf("request %d answered, want the parked get's (%d)", f.RequestID, getK)
	} else if code := errorCode(f); code != wire.CodeNoQuorum && code != wire.CodeNotLeader {
		t.Fatalf("the parked get with the followers still stopped: %v %v, want no_quorum (or not_leader)", f.Type, code)
	} else {
		t.Logf("the parked get: %v after %v", code, time.Since(parked).Round(time.Millisecond))
	}
}

// parkedGet sends a get of k and a PING after it until the PING is
// answered first (the get parked: the loop went on past it), and returns
// the get's request id. A get answered not_leader first (the owner's lease
// lapsed, nothing to wait for) is sent again, for at most clusterWait.
func parkedGet(t *testing.T, c *wireConn, ref wire.CacheRef) uint64 {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for id := uint64(100); ; id += 2 {
		c.send(append(wire.AppendCacheGet(nil, id, wire.CacheGet{Cache: ref, Key: []byte("k")}), wire.AppendPing(nil, id+1, 0)...))
		f := c.read()
		if f.Type == wire.TypePong && f.RequestID == id+1 {
			return id
		}
		if f.RequestID != id || errorCode(f) != wire.CodeNotLeader || time.Now().After(deadline) {
			t.Fatalf("the get of k, sent before a PING: answered first with %v %v (request %d), want it parked", f.Type, errorCode(f), f.RequestID)
		}
		if f = c.read(); f.Type != wire.TypePong {
			t.Fatalf("after the get: %v, want the PONG", f.Type)
		}
	}
}

// startOneLoopQuorumCacheCluster is startCacheClusterAt(Quorum) with every
// broker serving its connections on one event loop.
func startOneLoopQuorumCacheCluster(t *testing.T) *quorumCacheCluster {
	s := sharedStore(t)
	qc := &quorumCacheCluster{cacheCluster: &cacheCluster{t: t, brokers: map[string]*Broker{},
		id: cache.ID{Tenant: "t", Namespace: "n", Name: "kv"}}, cfgs: map[string]Config{}}
	cc := qc.cacheCluster
	var seeds []string
	for _, id := range []string{"a", "b", "c"} {
		cfg := clustered(id, s, Config{DataDir: t.TempDir()})
		cfg.Cluster.ShardLease, cfg.Cluster.PublishTimeout = replicationLease, 2*time.Second
		cfg.Net.EventLoops = 1 // a loop held by one read would stall every connection
		qc.cfgs[id] = cfg
		b := start(t, cfg)
		cc.brokers[id] = b
		seeds = append(seeds, b.Addr().String())
	}
	a := cc.brokers["a"]
	waitView(t, a.View(), "a sees a, b and c", registered(a.View(), "a", "b", "c"))
	cfg := cache.Config{Shards: 1, Durable: true, ReplicationFactor: 3, Fsync: engine.FsyncSetting{Kind: "OnCommit"},
		Consistency: engine.ConsistencyQuorum}
	cc.openCache(t, a, seeds, cfg)
	return qc
}

// wireConn is a connection speaking frames to a broker, its HELLO done
// (the cache features offered).
type wireConn struct {
	t      *testing.T
	nc     net.Conn
	in     []byte
	reader wire.Reader
}

func dialWire(t *testing.T, addr string) *wireConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, clusterWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &wireConn{t: t, nc: nc}
	c.send(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1,
		Features: wire.FeatureCache | wire.FeatureCounters, ClientName: []byte("test")}))
	if f := c.read(); f.Type != wire.TypeHelloOK {
		t.Fatalf("HELLO answered with %v %v", f.Type, errorCode(f))
	}
	return c
}

func (c *wireConn) send(frames []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(clusterWait))
	if _, err := c.nc.Write(frames); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// read returns the next frame, its body the reader's own, within
// clusterWait.
func (c *wireConn) read() wire.Frame {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(clusterWait))
	for {
		f, need, err := c.reader.Next(c.in)
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		if need == 0 {
			f.Body = append([]byte(nil), f.Body...)
			c.in = c.in[f.Size():]
			return f
		}
		buf := make([]byte, max(need, 64<<10))
		n, err := c.nc.Read(buf)
		c.in = append(c.in, buf[:n]...)
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
	}
}

// errorCode is an ERROR frame's code, 0 for any other frame.
func errorCode(f wire.Frame) wire.Code {
	if f.Type != wire.TypeError {
		return 0
	}
	var e wire.Error
	if err := e.Decode(f, wire.Limits{}); err != nil {
		return wire.CodeInternal
	}
	return e.Code
}
