package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/cluster/replicated"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/netio/wire"
)

// node is a broker's part in the cluster: the store, its View of the
// control plane's decisions, the catalog in the store, the peer
// transport, its registration, its control plane candidacy and the loop
// that opens and closes shards as the View changes. Its open and close
// are split around the engine's (the package doc's order); the methods
// Broker calls are no-ops on a nil node, a broker without Config.Cluster.
type node struct {
	cfg    ClusterConfig
	logger *slog.Logger
	diskID string      // registered, and the View's Local
	limits wire.Limits // the client protocol's, in force: what forwarded frames hold

	store    store.Store
	embedded *store.Embedded // set when this process runs the member
	dialed   *store.Etcd     // set when the broker dialled an external cluster

	view       *control.View
	catalog    *control.Catalog
	streams    *control.StreamCatalog // the engine's catalog
	caches     *control.CacheCatalog  // the cache store's
	migrated   []cluster.ObjectID     // what the data directory's catalogs held, migrated at this start
	peers      *peer.TCP
	forwarder  *netio.Forwarder
	replicas   *replicated.Replicas // the replicated shards' roles, the heartbeats
	reg        *control.Registration
	registered atomic.Bool // from Register until leave (read by /readyz)
	controller *control.Controller
	raftOff    *raftHandOff                       // keeps etcd's raft leadership off this broker while its control plane leads
	ctl        atomic.Pointer[control.Controller] // controller, for the peer goroutines that hand it heartbeats
	loop       *reconciler
	seen       map[string]bool // the brokers registered at the last round (retryReturned's)
	journal    *ackJournal     // ClusterConfig.AckJournal's, or nil
}

// openNode starts what the engine needs from the cluster: the store, the
// View (read once), the peer transport (answering peers overloaded until
// the client server serves them) and the forwarder over it, the catalogs
// in the store. diskID is the data directory's; "" (a memory file system,
// no data directory) draws one for this broker's life.
func openNode(cc ClusterConfig, logger *slog.Logger, diskID string, limits wire.Limits) (*node, error) {
	n := &node{cfg: cc, logger: logger.With("broker_id", cc.BrokerID), diskID: diskID, limits: limits.Effective()}
	if n.diskID == "" {
		var err error
		if n.diskID, err = drawDiskID(); err != nil {
			return nil, err
		}
	}
	for _, step := range []func() error{n.openJournal, n.openStore, n.startView, n.openPeers, n.openForwarder, n.openReplicas} {
		if err := step(); err != nil {
			_ = n.leave(context.Background()) // the peer listener, if it was opened
			n.close()
			return nil, err
		}
	}
	n.catalog = control.NewCatalog(control.CatalogConfig{Store: n.store, PlaceWait: cc.PlaceWait})
	n.streams = control.NewStreamCatalog(n.catalog, n.view, cc.PlaceWait)
	n.caches = control.NewCacheCatalog(n.catalog, n.view, cc.PlaceWait)
	return n, nil
}

// drawDiskID is the disk id of a broker whose data directory has none (on
// a memory file system, or none at all): new at every start, as its data
// is, so the control plane never takes what it held for still there.
func drawDiskID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("felix/broker: drawing a disk id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// startView starts the View and waits, within ReadyWait, until it has
// read the store once: before that the broker does not know which shards
// it holds.
func (n *node) startView() error {
	v, err := control.StartView(control.ViewConfig{Store: n.store, Local: n.replica(), Logger: n.logger})
	if err != nil {
		return err
	}
	n.view = v
	timeout := time.NewTimer(n.cfg.ReadyWait)
	defer timeout.Stop()
	for {
		changed := v.Changed()
		if v.Ready() {
			return nil
		}
		select {
		case <-changed:
		case <-timeout.C:
			return fmt.Errorf("felix/broker: the cluster view did not read the store within %v", n.cfg.ReadyWait)
		}
	}
}

func (n *node) replica() cluster.Replica {
	return cluster.Replica{Broker: n.cfg.BrokerID, DiskID: n.diskID}
}

// forwardSlackBytes is what a forwarded request adds to the client's
// frame (the FORWARD header and the credential), with room to spare.
const forwardSlackBytes = 1 << 20

// openPeers binds the peer listener. It answers peers overloaded until
// the client server is its handler (serveFrom).
func (n *node) openPeers() error {
	t, err := peer.Listen(peer.Config{ID: n.cfg.BrokerID, Addr: n.cfg.PeerAddr, Resolve: n.view.PeerAddr,
		FrameBytesMax: max(peer.DefaultFrameBytesMax, n.limits.FrameBytesMax+forwardSlackBytes), Logger: n.logger})
	if err != nil {
		return fmt.Errorf("felix/broker: peer listener on %s: %w", n.cfg.PeerAddr, err)
	}
	n.peers = t
	return nil
}

// openForwarder makes the forwarder of what another broker leads: over
// the peer transport, to the leader the View names.
func (n *node) openForwarder() error {
	f, err := netio.NewForwarder(netio.ForwarderConfig{Peers: n.peers, Router: n.view, Limits: n.limits})
	if err != nil {
		return err
	}
	n.forwarder = f
	return nil
}

// join registers the broker with the client address it serves on, then
// stands for the control plane and starts the reconcile loop: once
// registered, the control plane may place shards on it.
func (n *node) join(clientAddr string, reconcile []func() error) error {
	if n == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.StoreWait)
	defer cancel()
	b := cluster.Broker{ID: n.cfg.BrokerID, ClientAddr: orString(n.cfg.AdvertiseAddr, clientAddr),
		PeerAddr: orString(n.cfg.AdvertisePeerAddr, n.peers.Addr().String()), Rack: n.cfg.Rack, DiskID: n.diskID}
	var err error
	n.reg, err = control.Register(ctx, control.RegistrationConfig{Store: n.store, Broker: b, TTL: n.cfg.RegistrationTTL, Logger: n.logger})
	if err != nil {
		return err
	}
	n.registered.Store(true)
	n.controller, err = control.StartController(control.ControllerConfig{Store: n.store, ID: n.cfg.BrokerID,
		LeaseTTL: n.cfg.ControlLeaseTTL, ShardLease: n.cfg.ShardLease, Peers: n.peers, Logger: n.logger,
		OnPromotion: n.journal.onPromotion()})
	if err != nil {
		return err
	}
	n.ctl.Store(n.controller)
	n.raftOff = n.startRaftHandOff()
	if len(n.migrated) > 0 {
		n.awaitPlacement(n.migrated)
	}
	n.loop = startReconciler(n.view, reconcile, n.cfg.ReconcileBackoff, n.cfg.ReconcileBackoffMax, n.logger)
	n.logger.Info("joined the cluster", "client_addr", b.ClientAddr, "peer_addr", b.PeerAddr, "rack", b.Rack, "disk_id", b.DiskID)
	return nil
}

// stopLoop ends the reconcile loop: the first thing Stop does, so no
// shard opens or closes while the broker goes down.
func (n *node) stopLoop() {
	if n != nil && n.loop != nil {
		n.loop.stop()
	}
}

// leave stops serving peers, stands down from the control plane and
// revokes the registration (the control plane sees the broker gone at
// once), after the client server stopped and before the logs close.
func (n *node) leave(ctx context.Context) error {
	if n == nil {
		return nil
	}
	var errs []error
	n.replicas.Close() // leaderships end before the peers go: nothing is acknowledged past here
	if n.peers != nil {
		errs = append(errs, n.peers.Close())
	}
	n.raftOff.stop()
	if n.controller != nil {
		n.controller.Close()
	}
	if n.reg != nil {
		n.registered.Store(false)
		if err := n.reg.Stop(ctx); err != nil {
			// Not the broker's failure: its registration goes when the
			// lease ends. (The last brokers of an embedded cluster to stop
			// have no quorum left to revoke it.)
			n.logger.Warn("could not deregister from the cluster; the registration ends with its lease",
				"err", err, "ttl", n.cfg.RegistrationTTL)
		}
	}
	return errors.Join(errs...)
}

// close closes the View and the store, after the engine: the last of the
// cluster to go. leave has run before (Broker.close calls both, once).
func (n *node) close() error {
	if n == nil {
		return nil
	}
	if n.view != nil {
		n.view.Close()
	}
	return errors.Join(n.closeStore(), n.journal.close())
}

// notReady says why the broker is not ready yet, "" once it is: the View
// has read the store, the broker is registered, and a reconcile since has
// opened what it holds.
func (n *node) notReady() string {
	switch {
	case n == nil:
		return ""
	case !n.view.Ready():
		return "the cluster view has not read the store yet"
	case !n.registered.Load():
		return "not registered in the cluster"
	}
	return n.loop.notReady()
}
