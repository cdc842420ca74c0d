package broker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/segment/vfs"
)

// clusterWait bounds every wait of the cluster tests for the View to see
// something: far above what it takes, never slept.
const clusterWait = 20 * time.Second

// sharedStore is one in-memory store for the brokers of a test, closed at
// its end.
func sharedStore(t *testing.T) *store.Memory {
	s := store.NewMemory(store.MemoryConfig{})
	t.Cleanup(func() { s.Close() })
	return s
}

// clustered is cfg as one broker of a cluster on s, with a data directory
// on a memory file system of its own unless cfg has one.
func clustered(id string, s store.Store, cfg Config) Config {
	if cfg.DataDir == "" {
		cfg.DataDir, cfg.FS = "/data", vfs.NewMem()
	}
	cfg.Cluster = &ClusterConfig{BrokerID: id, Store: s}
	return cfg
}

// waitView waits until cond holds of v, reading it after each of its
// changes, for at most clusterWait.
func waitView(t *testing.T, v *control.View, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		changed := v.Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%s: not within %v; the view: %+v", what, clusterWait, v.Status())
		}
	}
}

// brokerIDs are the brokers registered, as v sees them.
func brokerIDs(v *control.View) []string {
	var ids []string
	for _, b := range v.Status().Brokers {
		ids = append(ids, b.ID)
	}
	return ids
}

// registered reports whether v sees exactly the brokers ids registered.
func registered(v *control.View, ids ...string) func() bool {
	return func() bool { return slices.Equal(brokerIDs(v), ids) }
}

// stop stops b within clusterWait, failing the test on an error.
func stop(t *testing.T, b *Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitRound waits until cond holds of b, looking again after each of its
// reconcile rounds, for at most clusterWait.
func waitRound(t *testing.T, b *Broker, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		ended := b.node.loop.roundEnded()
		if cond() {
			return
		}
		select {
		case <-ended:
		case <-deadline.C:
			t.Fatalf("%s: not within %v", what, clusterWait)
		}
	}
}
