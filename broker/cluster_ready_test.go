package broker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/store"
)

// gatedStore holds every Range until open is closed (a store the View
// cannot read yet), and closes asked at the first.
type gatedStore struct {
	store.Store
	asked, open chan struct{}
	once        *atomic.Bool
}

func newGatedStore(s store.Store) gatedStore {
	return gatedStore{Store: s, asked: make(chan struct{}), open: make(chan struct{}), once: new(atomic.Bool)}
}

func (g gatedStore) Range(ctx context.Context, prefix string) ([]store.KV, int64, error) {
	if g.once.CompareAndSwap(false, true) {
		close(g.asked)
	}
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	return g.Store.Range(ctx, prefix)
}

// /readyz answers 503 while the broker's View has not read the store (the
// admin server is up from the start), and 200 once Start has registered
// the broker and opened what it holds.
func TestReadyzWaitsForTheCluster(t *testing.T) {
	s := newGatedStore(sharedStore(t))
	cfg := clustered("a", s, Config{AdminAddr: freeAddr(t)})
	cfg.Net.Addr = "127.0.0.1:0"
	started := make(chan *Broker, 1)
	go func() {
		b, err := Start(cfg)
		if err != nil {
			t.Error(err)
		}
		started <- b
	}()
	<-s.asked // the View reads the store: the admin server is up
	if code, body := readyz(t, cfg.AdminAddr); code != http.StatusServiceUnavailable || body != "recovering\n" {
		t.Fatalf("/readyz while the View waits for the store: %d %q", code, body)
	}
	close(s.open)
	b := <-started
	if b == nil {
		t.FailNow()
	}
	t.Cleanup(func() { b.Stop(context.Background()) })
	if code, body := readyz(t, b.AdminAddr()); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("/readyz once started: %d %q", code, body)
	}
}

// A reconcile that fails keeps the broker not ready, saying why, and is
// tried again after the backoff without a change of the View; the first
// that succeeds makes it ready.
func TestAFailedReconcileIsRetriedAndSaysWhy(t *testing.T) {
	s := sharedStore(t)
	v, err := control.StartView(control.ViewConfig{Store: s, Local: cluster.Replica{Broker: "a", DiskID: "d"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	var fail atomic.Bool
	fail.Store(true)
	step := func() error {
		if fail.Load() {
			return errors.New("disk on fire")
		}
		return nil
	}
	r := startReconciler(v, []func() error{step}, 1, 1, slog.New(slog.DiscardHandler))
	t.Cleanup(r.stop)
	if why := r.notReady(); !strings.Contains(why, "disk on fire") {
		t.Fatalf("after a failed round: %q", why)
	}
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	ended := r.roundEnded()
	fail.Store(false)
	for r.notReady() != "" {
		select {
		case <-ended:
		case <-deadline.C:
			t.Fatalf("not retried within %v: %q", clusterWait, r.notReady())
		}
		ended = r.roundEnded()
	}
}

// freeAddr is a loopback address with a port free a moment ago, for a
// server whose address the test must know before it starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func readyz(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
