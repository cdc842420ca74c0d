package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/store"
)

// ClusterConfig makes a broker one of a cluster: it keeps its catalog in
// the control plane's store, opens only the shards the control plane
// placed on it, forwards what another broker leads over the peer
// transport, registers itself and stands as a candidate for the control
// plane. A cluster of one (one broker, an embedded single-member etcd) is
// what `felix serve` runs by default.
type ClusterConfig struct {
	// BrokerID names this broker in the cluster (its registration, the
	// peer handshake, the assignments). Required, unique in the cluster.
	BrokerID string
	// Rack is this broker's failure domain, for placing replicas apart;
	// "" is the rack every unlabelled broker shares.
	Rack string
	// PeerAddr is where the peer listener binds; "" is 127.0.0.1:0 (any
	// free port, PeerAddr() says which).
	PeerAddr string
	// AdvertiseAddr and AdvertisePeerAddr are the client and peer
	// addresses registered for other brokers and clients to reach this
	// one; "" is Net.AdvertiseAddr, else the bound address (set them when
	// binding a wildcard address).
	AdvertiseAddr, AdvertisePeerAddr string

	// The store, exactly one of the three:
	//
	// Store is one given by the caller, who closes it (tests share one
	// store.NewMemory between brokers in one process).
	Store store.Store
	// Endpoints are an external etcd cluster's client URLs (store.Dial),
	// with Prefix before every key and TLS, Username and Password to
	// authenticate, if set. The broker closes its client at Stop.
	Endpoints          []string
	Prefix             string
	TLS                *tls.Config
	Username, Password string
	// Embedded runs an etcd member in this process; its Dir "" is
	// <DataDir>/etcd (on the OS file system only), its Logger the
	// broker's. The broker closes it at Stop.
	Embedded *store.EmbedConfig

	// StoreWait bounds reaching the store at Start: an embedded member's
	// start (for a member of several, until a quorum has started) or an
	// external cluster's dial. 0 is StoreWaitDefault.
	StoreWait time.Duration
	// ReadyWait bounds Start's wait for the View to read the store once
	// (a broker that does not know what it holds cannot serve); past it
	// Start fails. 0 is ReadyWaitDefault.
	ReadyWait time.Duration
	// RegistrationTTL is the registration's lease (control.Register); 0 is
	// control.RegistrationTTLDefault.
	RegistrationTTL time.Duration
	// ControlLeaseTTL is the control plane candidacy's lease; 0 is
	// ShardLease/4 + 1 s (2 s at the default lease), at most
	// control.ControlLeaseTTLDefault.
	ControlLeaseTTL time.Duration
	// PlaceWait bounds a create's wait until the control plane has placed
	// the new stream or cache; 0 is control.PlaceWaitDefault.
	PlaceWait time.Duration
	// ReconcileBackoff is the first wait before a failed reconcile is
	// tried again (if no change comes first); it doubles up to
	// ReconcileBackoffMax. 0 is 100 ms and 5 s.
	ReconcileBackoff, ReconcileBackoffMax time.Duration
	// ShardLease is L, the lease a shard's leader holds (CLUSTER.md,
	// "Leases"): it heartbeats every L/4, stops acknowledging 3L/4 after a
	// heartbeat's send that was not answered with a renewal, and a dead
	// leader is replaced about 1.5 L after it died. 0 is ShardLeaseDefault.
	ShardLease time.Duration
	// PublishTimeout bounds a Quorum publish's wait for a majority (and any
	// replicated publish's wait for its leader's lease); past it the
	// publish is refused no_quorum or not_leader. 0 is
	// PublishTimeoutDefault.
	PublishTimeout time.Duration
	// AckJournal, for tests only: a path prefix under which the broker
	// journals every acknowledgement its leaderships send and every
	// promotion its control plane begins, in a file of its own
	// (<prefix>.<broker id>.<pid>.jsonl, ack_journal_entry.go), for the
	// history checker of the real-process nemeses. "" (always in
	// production): none, at no cost. `felix serve` reads it from
	// AckJournalEnv.
	AckJournal string
}

// Defaults of ClusterConfig.
const (
	// StoreWaitDefault is long enough for the members of a new cluster,
	// started by hand one after the other, to reach a quorum.
	StoreWaitDefault = 2 * time.Minute
	// ReadyWaitDefault bounds the View's first read of the store.
	ReadyWaitDefault = 30 * time.Second
	// ShardLeaseDefault: heartbeats never wait on a disk, so a one-second
	// fsync stall costs a healthy leader nothing; a dead one is replaced
	// within about 1.5 L + 1 s = 7 s.
	ShardLeaseDefault = 4 * time.Second
	// PublishTimeoutDefault is a replicated publish's wait for its
	// acknowledgement at the stream's consistency.
	PublishTimeoutDefault = 5 * time.Second
	// PeerAddrDefault is the peer listener's bind address when
	// ClusterConfig says nothing: loopback, any free port.
	PeerAddrDefault = "127.0.0.1:0"
)

// ErrClusterConfig matches a ClusterConfig refused at Start.
var ErrClusterConfig = errors.New("felix/broker: invalid cluster config")

// clusterDefaults returns cc with its zero fields filled in, or why it is
// refused. cfg is the broker's whole Config (the data directory, Owner).
func clusterDefaults(cfg *Config) (ClusterConfig, error) {
	cc := *cfg.Cluster
	stores := 0
	for _, set := range []bool{cc.Store != nil, len(cc.Endpoints) > 0, cc.Embedded != nil} {
		if set {
			stores++
		}
	}
	switch {
	case cc.BrokerID == "":
		return cc, fmt.Errorf("%w: no BrokerID", ErrClusterConfig)
	case stores != 1:
		return cc, fmt.Errorf("%w: exactly one of Store, Endpoints and Embedded must be set (%d are)", ErrClusterConfig, stores)
	case cfg.Owner != nil:
		return cc, fmt.Errorf("%w: Config.Owner must be nil: in a cluster the View is the one ownership source", ErrClusterConfig)
	}
	if cc.Embedded != nil {
		e := *cc.Embedded
		if e.Dir == "" {
			if !cfg.onOS() {
				return cc, fmt.Errorf("%w: an embedded etcd needs a directory on the OS file system (Embedded.Dir)", ErrClusterConfig)
			}
			e.Dir = filepath.Join(cfg.DataDir, "etcd")
		}
		if e.Logger == nil {
			e.Logger = cfg.logger()
		}
		cc.Embedded = &e
	}
	cc.PeerAddr = orString(cc.PeerAddr, PeerAddrDefault)
	cc.StoreWait = orDuration(cc.StoreWait, StoreWaitDefault)
	cc.ReadyWait = orDuration(cc.ReadyWait, ReadyWaitDefault)
	cc.RegistrationTTL = orDuration(cc.RegistrationTTL, control.RegistrationTTLDefault)
	cc.ShardLease = orDuration(cc.ShardLease, ShardLeaseDefault)
	// A dead leader that ran the control plane too is replaced once its
	// control lease has ended (up to its TTL after the broker died, and up
	// to 0.5 s more for etcd's expiry loop) and the new control plane has
	// waited a full shard lease: L/4 + 1 s of control lease keeps that
	// within 1.5 L + 1 s from L = 2 s (etcd grants whole seconds, and at
	// least 1.5 election timeouts: 2 s at its default).
	cc.ControlLeaseTTL = orDuration(cc.ControlLeaseTTL, min(control.ControlLeaseTTLDefault, cc.ShardLease/4+time.Second))
	cc.PlaceWait = orDuration(cc.PlaceWait, control.PlaceWaitDefault)
	cc.ReconcileBackoff = orDuration(cc.ReconcileBackoff, 100*time.Millisecond)
	cc.ReconcileBackoffMax = orDuration(cc.ReconcileBackoffMax, 5*time.Second)
	cc.PublishTimeout = orDuration(cc.PublishTimeout, PublishTimeoutDefault)
	return cc, nil
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
