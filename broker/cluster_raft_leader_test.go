package broker

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/netio"
)

// TestTheControlPlaneKeepsEtcdsRaftLeadershipOffItsBroker: three brokers
// whose etcd members are embedded in them; whichever leads the control
// plane does not keep etcd's raft leadership, even when it is moved onto
// its member, so one broker lost never costs both elections; and it
// hands it to the broker that leads fewest shards.
func TestTheControlPlaneKeepsEtcdsRaftLeadershipOffItsBroker(t *testing.T) {
	handed := make(chan string, 64) // the id of each broker that logged a hand-off
	bs := threeEmbedded(t, handed)
	if _, err := dial(t, bs[0]).CreateStream(testCtx(t), testStream, client.StreamConfig{Shards: 2}); err != nil {
		t.Fatal(err) // two shards' leaders on three brokers: one leads none
	}
	cp := func() *Broker {
		id, _ := bs[0].node.view.ControlPlane()
		for _, b := range bs {
			if b.node.cfg.BrokerID == id {
				return b
			}
		}
		return nil
	}
	waitRaft(t, bs, "a control plane elected, etcd's raft led elsewhere", func() bool {
		c := cp()
		return c != nil && !c.node.embedded.RaftLeader()
	})
	c := cp()
	id := c.node.cfg.BrokerID
	for len(handed) > 0 {
		<-handed // hand-offs before the control plane was c's, or before the move below
	}
	from := moveRaftLeadershipOnto(t, bs, id, handed)
	waitRaft(t, bs, "the raft leadership handed off the control plane's broker again", func() bool {
		return cp() == c && !c.node.embedded.RaftLeader()
	})
	led, fewest := shardsLed(c), -1
	for _, b := range bs {
		if b != c && (fewest < 0 || led[b.node.cfg.BrokerID] < fewest) {
			fewest = led[b.node.cfg.BrokerID]
		}
	}
	// A member that has just handed raft's leadership on does not take it
	// back at once (etcd answers "leader transfer took too long"): if the
	// broker leading fewest is the one it was moved from, the next one
	// takes it.
	for _, b := range bs {
		to := b.node.cfg.BrokerID
		if b.node.embedded.RaftLeader() && led[to] != fewest && led[from] != fewest {
			t.Fatalf("the raft leadership went to %s, which leads %d shards; another leads %d (%v)", to, led[to], fewest, led)
		}
	}
}

// shardsLed counts the shards each broker leads, as b's view has them.
func shardsLed(b *Broker) map[string]int {
	led := map[string]int{}
	for _, sh := range b.node.view.Status().Shards {
		led[sh.Assignment.Leader.Broker]++
	}
	return led
}

// moveRaftLeadershipOnto hands the raft leadership to broker id's member
// from whichever member leads, again while an attempt fails (raft gives a
// transfer one election timeout: on a loaded machine it may not make
// it), until id's broker logged that it handed it off again; it returns
// the broker it was moved from.
func moveRaftLeadershipOnto(t *testing.T, bs []*Broker, id string, handed <-chan string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx(t), clusterWait)
	defer cancel()
	for {
		moved, from := false, ""
		for _, b := range bs {
			if b.node.cfg.BrokerID != id && b.node.embedded.RaftLeader() {
				to, err := b.node.embedded.HandOffRaftLeadership(ctx, func(name string) (int, bool) { return 0, name == id }, 2*time.Second)
				t.Logf("moving the raft leadership from %s onto %s: %q, %v", b.node.cfg.BrokerID, id, to, err)
				moved, from = to == id, b.node.cfg.BrokerID
			}
		}
		if !moved {
			continue // a transfer timed out, or the leader changed meanwhile: again
		}
		select {
		case by := <-handed:
			if by != id {
				t.Fatalf("%s handed the raft leadership off, not %s, whose control plane leads", by, id)
			}
			return from
		case <-ctx.Done():
			t.Fatalf("the raft leadership moved onto %s was not handed off by it within %v", id, clusterWait)
		}
	}
}

// threeEmbedded starts brokers a, b and c on one machine, each with an
// etcd member embedded (fast ticks, no fsyncs) and a short shard lease;
// each broker's id goes to handed when it logs a raft hand-off.
func threeEmbedded(t *testing.T, handed chan<- string) []*Broker {
	t.Helper()
	ids := []string{"a", "b", "c"}
	var members []string
	var listeners []net.Listener
	for _, id := range ids {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners = append(listeners, l)
		members = append(members, id+"=http://"+l.Addr().String())
	}
	for _, l := range listeners {
		l.Close() // the members bind them next
	}
	bs := make([]*Broker, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		cfg := Config{DataDir: t.TempDir(), Net: netio.Config{Addr: "127.0.0.1:0"}, Logger: slog.New(handOffSpy{id: id, handed: handed}),
			Cluster: &ClusterConfig{BrokerID: id, ShardLease: 400 * time.Millisecond,
				Embedded: &store.EmbedConfig{Name: id, InitialCluster: strings.Join(members, ","), TickMs: 10, ElectionMs: 100, UnsafeNoFsync: true}}}
		wg.Go(func() { bs[i], errs[i] = Start(cfg) })
	}
	wg.Wait()
	t.Cleanup(func() { // together: a member left alone has no quorum to leave by
		var wg sync.WaitGroup
		for _, b := range bs {
			if b != nil {
				wg.Go(func() { stop(t, b) })
			}
		}
		wg.Wait()
	})
	for i := range bs {
		if errs[i] != nil {
			t.Fatalf("broker %s: %v", ids[i], errs[i])
		}
	}
	return bs
}

// handOffSpy is a broker's log handler that reports its raft hand-offs
// and drops every other record.
type handOffSpy struct {
	id     string
	handed chan<- string
}

func (h handOffSpy) Enabled(context.Context, slog.Level) bool { return true }
func (h handOffSpy) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h handOffSpy) WithGroup(string) slog.Handler            { return h }
func (h handOffSpy) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "handed etcd's raft leadership") {
		select {
		case h.handed <- h.id:
		default:
		}
	}
	return nil
}

// waitRaft waits until cond holds, looking again at each raft leader
// change and view change, for at most clusterWait.
func waitRaft(t *testing.T, bs []*Broker, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		raft, view := bs[0].node.embedded.RaftLeaderChanged(), bs[0].node.view.Changed()
		if cond() {
			return
		}
		select {
		case <-raft:
		case <-view:
		case <-deadline.C:
			t.Fatalf("%s: not within %v", what, clusterWait)
		}
	}
}
