package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
)

// `felix serve` with no cluster flags is a cluster of one: an embedded
// etcd member in <data>/etcd, the broker registered as felix-1, ready,
// serving; and it starts again on that directory with its streams.
func TestServeByDefaultIsAClusterOfOneOnEmbeddedEtcd(t *testing.T) {
	dir := t.TempDir()
	flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "127.0.0.1:0", "data": dir, "log-format": "text", "log-level": "error"}
	b, err := startBroker(configOf(t, flags))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Stop(context.Background()) })
	awaitView(t, b, "the broker sees itself registered", func() bool { return len(b.View().Status().Brokers) == 1 })
	if st := b.View().Status(); st.Brokers[0].ID != brokerIDAlone || st.Brokers[0].PeerAddr != b.PeerAddr().String() {
		t.Fatalf("registered: %+v, peer listener %v", st.Brokers, b.PeerAddr())
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd", "member")); err != nil {
		t.Fatalf("no etcd member in the data directory: %v", err)
	}
	if resp, err := http.Get("http://" + b.AdminAddr() + "/readyz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/readyz: %+v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	ctx := context.Background()
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "s"}
	cl := dialServed(t, b.Addr().String())
	if _, err := cl.CreateStream(ctx, s, client.StreamConfig{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Publish(ctx, s, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	again := startServed(t, configOf(t, flags))
	info, err := dialServed(t, again.Addr().String()).DescribeStream(ctx, s)
	if err != nil || info.Shards[0].NextOffset+info.Shards[1].NextOffset != 1 {
		t.Fatalf("after a restart: %+v %v", info, err)
	}
}

// Without a data directory the cluster of one keeps its state in memory.
func TestServeInMemoryRunsOnAMemoryStore(t *testing.T) {
	b := startServed(t, configOf(t, map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": "", "log-level": "error"}))
	if _, ok := b.Store().(*store.Memory); !ok || b.memStore == nil {
		t.Fatalf("the store of a broker without a data directory: %T", b.Store())
	}
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "m"}
	cl := dialServed(t, b.Addr().String())
	if _, err := cl.CreateStream(context.Background(), s, client.StreamConfig{InMemory: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Publish(context.Background(), s, []byte("x")); err != nil {
		t.Fatal(err)
	}
}

// The cluster flags are checked before anything starts, each error naming
// its flag; --peer-addr defaults beside --addr.
func TestClusterSettingsAreChecked(t *testing.T) {
	for _, c := range []struct {
		flags map[string]string
		want  string
	}{
		{map[string]string{"cluster": "a=127.0.0.1:1,b=127.0.0.1:2", "broker-id": "c"}, "--cluster"},
		{map[string]string{"cluster": "a=127.0.0.1:1,a=127.0.0.1:2", "broker-id": "a"}, "--cluster"},
		{map[string]string{"cluster": "a=nowhere", "broker-id": "a"}, "--cluster"},
		{map[string]string{"cluster": "a=127.0.0.1:1", "broker-id": "a", "data": ""}, "data directory"},
		{map[string]string{"cluster": "a=127.0.0.1:1", "broker-id": "a", "etcd-endpoints": "http://127.0.0.1:2379"}, "one or the other"},
		{map[string]string{"etcd-endpoints": "http://127.0.0.1:2379"}, "--broker-id"},
		{map[string]string{"peer-addr": "7119"}, "--peer-addr"},
	} {
		st := serveSettings()
		if err := st.resolve("", noEnv, c.flags); err != nil {
			t.Fatal(err)
		}
		if _, err := parseServeConfig(st); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v, want an error saying %q", c.flags, err, c.want)
		}
	}
	for addr, want := range map[string]string{
		"127.0.0.1:7117": "127.0.0.1:7119", "0.0.0.0:7117": "127.0.0.1:7119", ":7127": "127.0.0.1:7129",
		"10.0.0.5:7117": "10.0.0.5:7119", "127.0.0.1:0": "127.0.0.1:0",
	} {
		if got := configOf(t, map[string]string{"addr": addr}).cluster.peerAddr; got != want {
			t.Fatalf("--addr %s: peer address %s, want %s", addr, got, want)
		}
	}
	cfg := configOf(t, map[string]string{"cluster": "a=127.0.0.1:1,b=http://127.0.0.1:2", "broker-id": "b"})
	if e := clusterConfig(cfg).Embedded; e.Name != "b" || e.InitialCluster != "a=http://127.0.0.1:1,b=http://127.0.0.1:2" {
		t.Fatalf("--cluster's member: %+v", e)
	}
}

// Three brokers with --cluster (an embedded etcd member each, started
// together) form one cluster: a stream created through one is placed on
// all three, and a publish through any is acknowledged. A fourth broker
// joins the running cluster without being an etcd member, with
// --etcd-endpoints naming a member's client address, and takes shards of
// the next stream.
func TestThreeBrokersWithEmbeddedMembersAreOneCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("elects an etcd leader at etcd's default timing (about a second)")
	}
	names := []string{"a", "b", "c"}
	var members []string
	for _, n := range names {
		members = append(members, n+"="+freeAddr(t))
	}
	brokers := make([]*served, len(names))
	var wg sync.WaitGroup
	etcdClient := freeAddr(t)
	for i, n := range names {
		flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": t.TempDir(),
			"broker-id": n, "cluster": strings.Join(members, ","), "log-level": "error"}
		if i == 0 {
			flags["etcd-client-addr"] = etcdClient
		}
		cfg := configOf(t, flags)
		wg.Go(func() {
			var err error
			if brokers[i], err = startBroker(cfg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	t.Cleanup(func() { stopTogether(t, brokers) })
	if t.Failed() {
		t.FailNow()
	}
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "three"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	awaitView(t, brokers[0], "all three registered", func() bool { return len(brokers[0].View().Status().Brokers) == 3 })
	if _, err := dialServed(t, brokers[0].Addr().String()).CreateStream(ctx, s, client.StreamConfig{Shards: 3}); err != nil {
		t.Fatal(err)
	}
	id := engine.StreamID{Tenant: s.Tenant, Namespace: s.Namespace, Name: s.Name}
	for i, b := range brokers {
		awaitView(t, b, names[i]+" holds one shard and sees every leader", func() bool {
			held := 0
			for sh := range 3 {
				local, addr := b.View().Leader(id, sh)
				if !local && addr == "" {
					return false
				}
				if b.View().Holds(id, sh) {
					held++
				}
			}
			return held == 1
		})
	}
	awaitOpened(t, brokers, id, 3)
	for i, b := range brokers {
		c := dialServed(t, b.Addr().String())
		for k := range 6 {
			if _, err := c.Publish(ctx, s, []byte(names[i]), client.WithKey(fmt.Appendf(nil, "key-%d", k))); err != nil {
				t.Fatalf("a publish through %s: %v", names[i], err)
			}
		}
	}
	joinWithoutMember(t, brokers, etcdClient)
}

// joinWithoutMember starts broker d on --etcd-endpoints (a's member's
// client address): it registers, and a stream of 4 shards created through
// it is placed on all four brokers (d, the one leading none yet, leads
// one) and takes a publish through d.
func joinWithoutMember(t *testing.T, brokers []*served, etcdClient string) {
	cfg := configOf(t, map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": t.TempDir(),
		"broker-id": "d", "etcd-endpoints": "http://" + etcdClient, "log-level": "error"})
	d, err := startBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopTogether(t, []*served{d}) })
	awaitView(t, brokers[0], "d registered", func() bool { return len(brokers[0].View().Status().Brokers) == 4 })
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "four"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := dialServed(t, d.Addr().String()).CreateStream(ctx, s, client.StreamConfig{Shards: 4}); err != nil {
		t.Fatal(err)
	}
	id := engine.StreamID{Tenant: s.Tenant, Namespace: s.Namespace, Name: s.Name}
	held := 0
	for sh := range 4 {
		if d.View().Holds(id, sh) {
			held++
		}
	}
	if held != 1 {
		t.Fatalf("d, which joined without an etcd member, holds %d of 4 new shards, want 1", held)
	}
	awaitOpened(t, append(slices.Clip(brokers), d), id, 4)
	for k := range 8 {
		if _, err := dialServed(t, d.Addr().String()).Publish(ctx, s, []byte("d"), client.WithKey(fmt.Appendf(nil, "key-%d", k))); err != nil {
			t.Fatalf("a publish through d: %v", err)
		}
	}
}

// stopTogether stops the brokers at once, as an operator stopping a
// cluster would: one after the other, the last would wait for an etcd
// quorum that is gone.
func stopTogether(t *testing.T, brokers []*served) {
	var wg sync.WaitGroup
	for _, b := range brokers {
		if b != nil {
			wg.Go(func() {
				began := time.Now()
				if err := b.Stop(context.Background()); err != nil {
					t.Error(err)
				}
				t.Logf("%s stopped in %v", b.PeerAddr(), time.Since(began))
			})
		}
	}
	wg.Wait()
}

// awaitView waits until cond holds, looking again at each change of b's
// View.
func awaitView(t *testing.T, b *served, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		changed := b.View().Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%s: not within 30s; the view: %+v", what, b.View().Status())
		}
	}
}

// awaitOpened waits until each of the stream's shards is open on the
// broker its View names the holder (a placement is in the View before the
// holder's reconcile round opens it), on the brokers' Views and reconcile
// rounds, never a sleep.
func awaitOpened(t *testing.T, brokers []*served, id engine.StreamID, shards int) {
	t.Helper()
	opened := func() bool {
		for sh := range shards {
			open := false
			for _, b := range brokers {
				if s, err := b.Engine().Stream(id); err == nil && b.View().Holds(id, sh) && s.Held(sh) {
					open = true
				}
			}
			if !open {
				return false
			}
		}
		return true
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		wake := make(chan struct{}, 2*len(brokers))
		stop := make(chan struct{})
		for _, b := range brokers {
			for _, ch := range []<-chan struct{}{b.View().Changed(), b.Reconciled()} {
				go func() {
					select {
					case <-ch:
						wake <- struct{}{}
					case <-stop:
					}
				}()
			}
		}
		done := opened()
		if !done {
			select {
			case <-wake:
			case <-deadline.C:
				close(stop)
				t.Fatalf("%s: not every one of its %d shards opened on its holder within 30s", id, shards)
			}
		}
		close(stop)
		if done {
			return
		}
	}
}

func dialServed(t *testing.T, addr string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// freeAddr is a loopback address whose port was free a moment ago: for
// the etcd members, whose addresses each must know before any starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
