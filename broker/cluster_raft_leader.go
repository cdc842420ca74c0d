package broker

import (
	"context"
	"errors"
	"time"

	"github.com/felixbroker/felix/cluster/store"
)

// raftHandOff keeps etcd's raft leadership off this broker's embedded
// member while this broker's control plane leads. A broker lost with both
// costs a failover the two elections back to back (etcd's, whose lease
// extension the control plane's lease waits for, then the control
// plane's, which then waits a full L by rule: 5.2 to 6.7 s at L = 1 s
// against 2.6 to 3.6 s for the control plane alone); kept apart, a lost
// broker costs one of them. A cluster whose members are not in the
// brokers (--etcd-endpoints), or of one member, has nothing to keep
// apart.
type raftHandOff struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// raftHandOffTry is how long one member is given to take the leadership:
// two election timeouts at etcd's default (raft gives up on a transfer
// after one).
const raftHandOffTry = 2 * time.Second

// raftHandOffBackoff is how long a failed hand-off waits before the next:
// while raft transfers its leadership it drops proposals (for up to an
// election timeout when the transferee never takes it), so a member that
// cannot take it is not offered it at every heartbeat.
const raftHandOffBackoff = 30 * time.Second

// startRaftHandOff looks every heartbeat interval (L/4) whether this
// broker leads both, and hands the raft leadership to another member
// whose broker is registered (transfereeRank); nil when there is nothing
// to keep apart.
func (n *node) startRaftHandOff() *raftHandOff {
	if n.embedded == nil || len(n.embedded.Members()) < 2 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &raftHandOff{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(max(n.cfg.ShardLease/4, 10*time.Millisecond))
		defer tick.Stop()
		var retryAt time.Time // after a failure
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if now.Before(retryAt) {
					continue
				}
			}
			if !n.handOffRaftLeadership(ctx) {
				retryAt = time.Now().Add(raftHandOffBackoff)
			}
		}
	}()
	return h
}

// handOffRaftLeadership hands the raft leadership off if this broker's
// control plane and member lead both; false when that failed (logged).
func (n *node) handOffRaftLeadership(ctx context.Context) bool {
	if n.controller == nil || !n.controller.Status().Leading || !n.embedded.RaftLeader() {
		return true
	}
	to, err := n.embedded.HandOffRaftLeadership(ctx, n.transfereeRank(), raftHandOffTry)
	switch {
	case err == nil && to != "":
		n.logger.Info("handed etcd's raft leadership to another member, off the control plane's broker", "to", to)
	case err != nil && ctx.Err() == nil:
		why := "no other member took it"
		if !errors.Is(err, store.ErrNoTransferee) {
			why = err.Error()
		}
		n.logger.Warn("this broker leads both the control plane and etcd's raft; handing the raft leadership off failed, trying again later",
			"why", why, "retry_in", raftHandOffBackoff)
	}
	return err == nil
}

// transfereeRank ranks the members a hand-off may offer the raft
// leadership to: the other registered brokers' members, the broker that
// leads fewest shards first (the raft leader lost with a shard's leader
// adds etcd's election to that shard's failover; lost with a broker
// that leads nothing, it costs no failover at all).
func (n *node) transfereeRank() func(id string) (int, bool) {
	st := n.view.Status()
	led := map[string]int{}
	for _, b := range st.Brokers {
		if b.ID != n.cfg.BrokerID {
			led[b.ID] = 0
		}
	}
	for _, sh := range st.Shards {
		if _, ok := led[sh.Assignment.Leader.Broker]; ok {
			led[sh.Assignment.Leader.Broker]++
		}
	}
	return func(id string) (int, bool) {
		count, ok := led[id]
		return count, ok
	}
}

// stop ends the goroutine and waits for it; a nil raftHandOff is a no-op.
func (h *raftHandOff) stop() {
	if h != nil {
		h.cancel()
		<-h.done
	}
}
