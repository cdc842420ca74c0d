package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
)

// `felix sub` at a broker that does not lead the shard follows the
// redirect it answers, once, to the leader it names, and reads there: in a
// cluster any broker's address will do.
func TestSubFollowsTheRedirectToTheShardsLeader(t *testing.T) {
	etcdClient := freeAddr(t)
	a := startServed(t, configOf(t, map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": t.TempDir(),
		"broker-id": "a", "etcd-client-addr": etcdClient, "log-level": "error"}))
	b := startServed(t, configOf(t, map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": t.TempDir(),
		"broker-id": "b", "etcd-endpoints": "http://" + etcdClient, "log-level": "error"}))
	awaitView(t, a, "b registered", func() bool { return len(a.View().Status().Brokers) == 2 })
	s := client.Stream{Tenant: "default", Namespace: "demo", Name: "redirect"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := dialServed(t, a.Addr().String()).CreateStream(ctx, s, client.StreamConfig{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	id := engine.StreamID{Tenant: s.Tenant, Namespace: s.Namespace, Name: s.Name}
	shard := -1
	awaitView(t, a, "b leads a shard, as a sees it", func() bool {
		for i := range 2 {
			if leader, ok := a.View().LeaderBroker(id, i); ok && leader == "b" {
				shard = i
				return true
			}
		}
		return false
	})
	for opened := false; !opened; {
		round := b.Reconciled()
		st, err := b.Engine().Stream(id)
		if opened = err == nil && st.Held(shard); !opened {
			select {
			case <-round:
			case <-ctx.Done():
				t.Fatalf("b did not open shard %d", shard)
			}
		}
	}
	var key []byte
	for i := 0; ; i++ {
		if key = fmt.Appendf(nil, "k%d", i); engine.ShardFor(key, 2) == shard {
			break
		}
	}
	if _, err := dialServed(t, a.Addr().String()).Publish(ctx, s, []byte("led by b"), client.WithKey(key)); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "sub", "demo/redirect", "--shard", strconv.Itoa(shard), "--from", "earliest", "--count", "1",
		"--addr", a.Addr().String())
	if err != nil {
		t.Fatalf("felix sub at the broker that does not lead shard %d: %v", shard, err)
	}
	contains(t, out, "led by b")
}
