package broker

import (
	"context"
	"fmt"

	"github.com/felixbroker/felix/cluster/store"
)

// openStore reaches the control plane's store ClusterConfig names: the
// caller's, an external cluster's (dialled) or an embedded member's
// (started), within StoreWait.
func (n *node) openStore() error {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.StoreWait)
	defer cancel()
	switch {
	case n.cfg.Store != nil:
		n.store = n.cfg.Store
	case n.cfg.Embedded != nil:
		e, err := store.StartEmbedded(ctx, *n.cfg.Embedded)
		if err != nil {
			return err
		}
		n.embedded, n.store = e, e.Store()
		n.logger.Info("embedded etcd member serving", "name", n.cfg.Embedded.Name, "dir", n.cfg.Embedded.Dir,
			"client_url", e.ClientURL(), "peer_url", e.PeerURL())
		go n.logMemberFailures(e.Err())
	default:
		s, err := store.Dial(ctx, store.DialConfig{
			Endpoints: n.cfg.Endpoints, Prefix: n.cfg.Prefix, TLS: n.cfg.TLS,
			Username: n.cfg.Username, Password: n.cfg.Password, Logger: n.logger,
		})
		if err != nil {
			return err
		}
		n.store, n.dialed = s, s
	}
	return nil
}

// closeStore closes what openStore opened, once: the dialled client, or
// the embedded member (whose Close closes its own client first, then the
// member). A store the caller gave is the caller's to close.
func (n *node) closeStore() error {
	var err error
	switch {
	case n.embedded != nil:
		err = n.embedded.Close()
	case n.dialed != nil:
		err = n.dialed.Close()
	}
	n.embedded, n.dialed = nil, nil
	if err != nil {
		return fmt.Errorf("felix/broker: closing the cluster store: %w", err)
	}
	return nil
}

// logMemberFailures logs what the running embedded member reports failing,
// until it stops (Err is closed then). The broker goes on: the View and
// the registration retry the store, and /readyz says what they lack.
func (n *node) logMemberFailures(errs <-chan error) {
	for err := range errs {
		n.logger.Error("the embedded etcd member failed", "err", err)
	}
}
