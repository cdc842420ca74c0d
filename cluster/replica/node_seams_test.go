package replica

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
)

// silentControl is a transport whose control plane never answers: each
// heartbeat's Call waits for its context, and how long it waited is kept
// (the first few: the rest are dropped).
type silentControl struct {
	waited chan time.Duration
}

func (s *silentControl) ID() string            { return "a" }
func (s *silentControl) Handle(peer.Handler)   {}
func (s *silentControl) Send(*peer.Call) error { return peer.ErrNotSent }
func (s *silentControl) Close() error          { return nil }
func (s *silentControl) Call(ctx context.Context, _ string, _, _ []byte) (wire.Frame, error) {
	start := time.Now()
	<-ctx.Done()
	select {
	case s.waited <- time.Since(start):
	default: // the test read what it needed: a closing node's heartbeats, given up at once, are not waited for
	}
	return wire.Frame{}, peer.ErrOutcomeUnknown
}

// A heartbeat waits L/4 for its grant (its period) unless the node is
// told otherwise (the simulator's seam: NodeConfig.HeartbeatTimeout).
func TestAHeartbeatWaitsItsTimeoutForItsGrant(t *testing.T) {
	const lease = time.Second
	for _, c := range []struct {
		set, want time.Duration
	}{{0, lease / 4}, {lease/4 - time.Nanosecond, lease/4 - time.Nanosecond}} {
		synctest.Test(t, func(t *testing.T) {
			tr := &silentControl{waited: make(chan time.Duration, 4)}
			n, err := NewNode(NodeConfig{Broker: cluster.Replica{Broker: "a", DiskID: "d"}, Transport: tr,
				ControlPlane: func() string { return "cp" }, Lease: lease, HeartbeatTimeout: c.set})
			if err != nil {
				t.Fatal(err)
			}
			if got := <-tr.waited; got != c.want {
				t.Errorf("HeartbeatTimeout %v: a heartbeat waited %v for its grant, want %v", c.set, got, c.want)
			}
			_ = n.Close()
		})
	}
}

// A secondary part held while its shard leads waits PartLeadDelay before
// it fences and adopts, and again before it leads.
func TestAPartLeadsPartLeadDelayTwiceAfterItIsHeld(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyLeader, "a", "b", "c")
		if _, err := c.publish(sid, "r0"); err != nil {
			t.Fatal(err)
		}
		delay := c.lease / 2
		c.brokers["a"].node.cfg.PartLeadDelay = delay // before the part's goroutine starts: HoldPart starts it
		c.holdPart("b", sid, auxPart)
		c.holdPart("c", sid, auxPart)
		held := time.Now()
		c.holdPart("a", sid, auxPart)
		node := c.brokers["a"].node
		for deadline := held.Add(4 * c.lease); node.PartLeader(sid, auxPart) == nil && time.Now().Before(deadline); {
			time.Sleep(c.lease / 40)
		}
		took := time.Since(held)
		if node.PartLeader(sid, auxPart) == nil {
			t.Fatalf("the part did not lead within %v", took)
		}
		if took < 2*delay {
			t.Errorf("the part led %v after it was held, before twice its PartLeadDelay %v", took, delay)
		}
	})
}
