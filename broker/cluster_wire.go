package broker

import (
	"net"

	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/netio/wire"
)

// openCluster starts the broker's part in the cluster, when Config.Cluster
// is set: after the data directory and the admin server, before the
// engine (which takes its catalog, placement and ownership from it).
func (b *Broker) openCluster() error {
	if b.cfg.Cluster == nil {
		return nil
	}
	cc, err := clusterDefaults(&b.cfg)
	if err != nil {
		return err
	}
	if b.node, err = openNode(cc, b.cfg.logger(), b.diskID, b.cfg.Net.Limits); err != nil {
		return err
	}
	b.diskID = b.node.diskID
	if b.node.migrated, err = b.node.migrate(b.fs, b.cfg.DataDir); err != nil {
		return err
	}
	if b.cfg.Net.BrokerID == "" {
		b.cfg.Net.BrokerID = cc.BrokerID
	}
	if b.cfg.Net.AdvertiseAddr == "" {
		b.cfg.Net.AdvertiseAddr = cc.AdvertiseAddr // what clients are told is what is registered
	}
	return nil
}

// joinCluster registers the broker once its client server listens, and
// starts the control plane candidacy and the reconcile loop.
func (b *Broker) joinCluster() error {
	if b.node == nil {
		return nil
	}
	addr := orString(b.cfg.Net.AdvertiseAddr, b.server.Addr().String())
	return b.node.join(addr, []func() error{b.node.retryReturned, b.engine.Reconcile, b.caches.Reconcile, b.node.replicas.AssignRoles})
}

// notReady is what /readyz asks once Start has finished: nil for a broker
// alone (ready once started), the cluster's conditions otherwise.
func (b *Broker) notReady() func() string {
	if b.node == nil {
		return nil
	}
	return b.node.notReady
}

// engineOptions gives the engine its catalog in the store, the View as its
// one ownership source and its placement (it opens only the shards placed
// on this broker), and the forwarder of the publishes' parts another
// broker leads.
func (n *node) engineOptions(o *engine.Options) {
	if n == nil {
		return
	}
	o.Catalog, o.Owner, o.Placement, o.Forward = n.streams, n.view, n.view, n.forwarder
	o.Replication = n.replicas
}

// cacheOptions is engineOptions for the caches (whose writes for another
// broker's shards the client server forwards).
func (n *node) cacheOptions(co *cache.Options) {
	if n == nil {
		return
	}
	co.Catalog, co.Owner, co.Placement = n.caches, n.view, n.view
	co.Replication = n.replicas
	co.QuorumTimeout = n.cfg.PublishTimeout // a Quorum cache's read waits for its write as long as the write does
}

// groupOptions gives the groups the replication of a replicated stream
// shard's group logs.
func (n *node) groupOptions(o *group.Options) {
	if n == nil {
		return
	}
	o.Replication = n.replicas
}

// holdGroups has the reconcile loop hold the group logs of the replicated
// stream shards held here, once the groups are open.
func (n *node) holdGroups(hold func(engine.StreamID, int) error) {
	if n == nil {
		return
	}
	n.replicas.HoldGroups(hold)
}

// serverConfig gives the client server the View, for its redirects and
// its BROKER_LIST, and the forwarder, for the cache and counter requests
// another broker leads.
func (n *node) serverConfig(nc *netio.Config) {
	if n == nil {
		return
	}
	nc.Owner, nc.Forwarder, nc.Brokers = n.view, n.forwarder, n.brokerList
}

// brokerList is BROKER_LIST's answer: every registered broker, by id, at
// the client address it registered.
func (n *node) brokerList() []wire.BrokerInfo {
	var out []wire.BrokerInfo
	for _, b := range n.view.Brokers() {
		out = append(out, wire.BrokerInfo{ID: b.ID, Addr: b.ClientAddr})
	}
	return out
}

// servePeers makes the client server the handler of peers' requests (the
// leader's side of what other brokers forward), beside replication's: the
// replication frames go to the replica node, heartbeats to the control
// plane (which answers not_leader unless it leads).
func (n *node) servePeers(srv *netio.Server) {
	if n != nil {
		n.peers.Handle(peerMux{clients: srv, n: n})
	}
}

// peerMux routes a peer's request by its frame type.
type peerMux struct {
	clients peer.Handler
	n       *node
}

func (m peerMux) ServePeer(from string, req wire.Frame, r peer.Reply) {
	switch {
	case req.Type == wire.TypeHeartbeat:
		if c := m.n.ctl.Load(); c != nil {
			c.ServeHeartbeat(from, req, r)
			return
		}
		_ = r.Answer(wire.AppendError(nil, r.RequestID(), &wire.Error{Code: wire.CodeNotLeader,
			Message: "this broker does not run the control plane (it has not joined the cluster yet)"}))
	case wire.PeerOnly(req.Type) && req.Type != wire.TypeForward:
		m.n.replicas.Node().ServePeer(from, req, r)
	default:
		m.clients.ServePeer(from, req, r)
	}
}

// View is the broker's view of the cluster, nil without Config.Cluster.
func (b *Broker) View() *control.View {
	if b.node == nil {
		return nil
	}
	return b.node.view
}

// Store is the control plane's store the broker uses, nil without
// Config.Cluster. Stop closes it, unless ClusterConfig.Store gave it.
func (b *Broker) Store() store.Store {
	if b.node == nil {
		return nil
	}
	return b.node.store
}

// PeerAddr is the peer listener's address, nil without Config.Cluster.
func (b *Broker) PeerAddr() net.Addr {
	if b.node == nil || b.node.peers == nil {
		return nil
	}
	return b.node.peers.Addr()
}

// Reconciled returns a channel closed when this broker's next round of
// bringing its open shards in line with its View ends (one runs after
// every change the View sees): take it, look, and wait on it, and no round
// is missed. Nil without Config.Cluster.
func (b *Broker) Reconciled() <-chan struct{} {
	if b.node == nil || b.node.loop == nil {
		return nil
	}
	return b.node.loop.roundEnded()
}

// retryReturned ends the peer links' backoff to every broker that has
// registered since the last round (a broker that restarted: its
// registration went and came back), so what is forwarded to it flows as
// soon as it is back, not after a dial backoff that was about its absence.
// A reconcile step: it runs on the reconciler's goroutine only, which owns
// n.seen.
func (n *node) retryReturned() error {
	now := map[string]bool{}
	for _, b := range n.view.Brokers() {
		now[b.ID] = true
		if !n.seen[b.ID] && b.ID != n.cfg.BrokerID {
			n.peers.Retry(b.ID)
		}
	}
	n.seen = now
	return nil
}
