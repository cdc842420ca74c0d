package store

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
)

// dialTimeoutDefault bounds connecting to an endpoint when DialConfig says
// nothing.
const dialTimeoutDefault = 5 * time.Second

// DialConfig configures Dial.
type DialConfig struct {
	// Endpoints are the cluster's client URLs. Required.
	Endpoints []string
	// Prefix is prepended to every key (client/v3 namespace), so several
	// Felix clusters, or other tenants, can share one etcd; "" is none.
	Prefix string
	// DialTimeout bounds connecting to one endpoint; 0 is 5 s.
	DialTimeout time.Duration
	// TLS, Username and Password authenticate to the cluster, if set.
	TLS                *tls.Config
	Username, Password string
	// Logger receives the client's logs at LogLevel and above (nil:
	// slog.LevelWarn); nil discards them.
	Logger   *slog.Logger
	LogLevel slog.Leveler
}

// Dial connects to an external etcd cluster and reads from it once,
// within ctx, so a wrong endpoint fails here rather than at first use.
func Dial(ctx context.Context, cfg DialConfig) (*Etcd, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("%w: dial etcd: no endpoints", ErrInvalid)
	}
	timeout := cfg.DialTimeout
	if timeout <= 0 {
		timeout = dialTimeoutDefault
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: timeout,
		TLS:         cfg.TLS,
		Username:    cfg.Username,
		Password:    cfg.Password,
		Logger:      zapLogger(cfg.Logger, cfg.LogLevel),
	})
	if err != nil {
		return nil, fmt.Errorf("felix/cluster/store: dial etcd %v: %w", cfg.Endpoints, err)
	}
	if cfg.Prefix != "" {
		c.KV = namespace.NewKV(c.KV, cfg.Prefix)
		c.Watcher = namespace.NewWatcher(c.Watcher, cfg.Prefix)
		c.Lease = namespace.NewLease(c.Lease, cfg.Prefix)
	}
	s := newEtcd(c, nil)
	if _, _, err := s.Get(ctx, "felix-dial-probe"); err != nil {
		s.Close()
		return nil, fmt.Errorf("felix/cluster/store: dial etcd %v: %w", cfg.Endpoints, err)
	}
	return s, nil
}
