package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
)

// WithTLS makes every connection of the client (its own and each
// subscription's) speak TLS with cfg, to a broker's TLS listener (felix
// serve --tls-addr). When cfg names no ServerName, the host of the address
// dialed is the name the broker's certificate is checked against. nil
// leaves the connections plain.
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// startTLS runs the TLS handshake over nc within ctx; on failure nc is
// closed.
func startTLS(ctx context.Context, nc net.Conn, addr string, cfg *tls.Config) (net.Conn, error) {
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("felix/client: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}
