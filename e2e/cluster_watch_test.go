package e2e

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/felixbroker/felix/client"
)

// connRecorder is a dialer that keeps every connection it made, so a
// test can cut one.
type connRecorder struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (r *connRecorder) option() client.Option {
	return client.WithDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			r.mu.Lock()
			r.conns = append(r.conns, nc)
			r.mu.Unlock()
		}
		return nc, err
	})
}

// last is the connection dialed last.
func (r *connRecorder) last() net.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns[len(r.conns)-1]
}

// A cluster client's watch of a key, opened through a broker that does
// not own it, follows the redirect to the owner; when its connection is
// cut it is opened again from where it stopped: the writes made
// meanwhile are delivered, none missed and none twice.
func TestAClusterWatchIsOpenedAgainWhereItStopped(t *testing.T) {
	c := startCluster(t, 2, nil)
	id := createClusterCache(t, c, c.brokers[0], 1)
	away := c.other(cacheOwnership(id), 0)
	rec := &connRecorder{}
	cc := dialCluster(t, []string{away.addr()}, rec.option())
	ca := cc.Cache(client.CacheName{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name})
	ctx := testCtx(t)
	w, err := ca.Watch(ctx, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cut := rec.last() // the watch's own connection, at the owner
	put := func(i int) {
		if _, err := ca.Put(ctx, []byte("k"), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	want := func(i int) {
		ev, err := w.Next(ctx)
		if err != nil || ev.Kind != client.WatchPut || string(ev.Value) != fmt.Sprint("v", i) {
			t.Fatalf("event %d: %+v %v, want the put of v%d", i, ev, err, i)
		}
	}
	put(0)
	want(0)
	_ = cut.Close()
	put(1)
	put(2)
	want(1)
	want(2)
	if n := w.Reopened(); n != 1 {
		t.Fatalf("the watch was opened again %d times, want once", n)
	}
	put(3)
	want(3)
}
