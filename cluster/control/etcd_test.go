package control

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/store"
)

// etcdWaitMax bounds every wait of a test on embedded etcd; reaching it
// fails the test.
const etcdWaitMax = 10 * time.Second

// startEtcd is a single embedded member with 10 ms ticks and a 100 ms
// election timeout. Its Close is the test's last cleanup: every client
// of it (registered later) is closed first.
func startEtcd(t testing.TB, fsync bool) store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), etcdWaitMax)
	defer cancel()
	m, err := store.StartEmbedded(ctx, store.EmbedConfig{Dir: t.TempDir(), TickMs: 10, ElectionMs: 100, UnsafeNoFsync: !fsync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m.Store()
}

// awaitStatus waits, on the view's Changed, until cond holds.
func awaitStatus(t *testing.T, v *View, cond func(Status) bool) Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), etcdWaitMax)
	defer cancel()
	for {
		changed := v.Changed()
		if st := v.Status(); cond(st) {
			return st
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("the view did not get there within %v: %+v", etcdWaitMax, v.Status())
		}
	}
}

// TestTheWholeLoopOnEmbeddedEtcd: three brokers register on embedded
// etcd, two run a control plane, all three a view; a stream of six shards
// is created and placed two on each broker; every view agrees; the stream
// is deleted and its assignments go. Closing it all leaves no goroutine
// of this package behind.
func TestTheWholeLoopOnEmbeddedEtcd(t *testing.T) {
	s := startEtcd(t, false)
	var regs []*Registration
	var views []*View
	var controllers []*Controller
	for n := 1; n <= 3; n++ {
		b := testBroker(n)
		regs = append(regs, register(t, s, b, nil))
		views = append(views, startView(t, s, b))
		if n <= 2 {
			controllers = append(controllers, startController(t, s, b.ID, nil))
		}
	}
	c := NewCatalog(CatalogConfig{Store: s, PlaceWait: etcdWaitMax})
	start := time.Now()
	entry, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(6, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("created and placed in %v", time.Since(start))
	stored := storedAssignments(t, s)
	if n := leadersOf(stored); len(stored) != 6 || n["b1"] != 2 || n["b2"] != 2 || n["b3"] != 2 {
		t.Fatalf("leaders per broker %v over %d assignments, want 2 each of 6", n, len(stored))
	}
	for i, v := range views {
		awaitStatus(t, v, func(st Status) bool { return len(st.Shards) == 6 && len(st.Brokers) == 3 })
		wantViewOf(t, v, testBroker(i+1), views[0].Status(), streamID("orders"), stored)
	}
	if got := leading(controllers...); len(got) != 1 {
		t.Fatalf("controllers leading: %v, want one", got)
	}
	if err := c.Delete(t.Context(), entry.Object); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		awaitStatus(t, v, func(st Status) bool { return len(st.Shards) == 0 && len(st.Objects) == 0 })
	}
	for _, c := range controllers {
		c.Close()
	}
	for i := range views {
		views[i].Close()
		if err := regs[i].Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if left := ourGoroutinesAfterExit(); len(left) > 0 {
		t.Fatalf("goroutines of this package left after closing:\n%s", strings.Join(left, "\n\n"))
	}
}

// ourGoroutinesAfterExit lists this package's goroutines once those that
// have signalled their end have returned: a goroutine closes its done
// channel in a deferred call, so Close can return an instant before it is
// gone. It yields, a bounded number of times; it never sleeps.
func ourGoroutinesAfterExit() []string {
	left := ourGoroutines()
	for i := 0; i < 1000 && len(left) > 0; i++ {
		runtime.Gosched()
		left = ourGoroutines()
	}
	return left
}

// ourGoroutines lists the goroutines running this package's code (not
// its tests').
func ourGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var ours []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		for line := range strings.SplitSeq(g, "\n") {
			if strings.Contains(line, "/cluster/control/") && !strings.Contains(line, "_test.go") {
				ours = append(ours, g)
				break
			}
		}
	}
	return ours
}
