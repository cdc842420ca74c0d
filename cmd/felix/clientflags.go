package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/client"
)

// brokerFlags are what every client command needs to reach a broker.
type brokerFlags struct {
	Addr    string        `help:"Broker address." default:"127.0.0.1:7117" env:"FELIX_ADDR"`
	Brokers []string      `help:"Brokers of a cluster, comma-separated: the client tries them in turn, learns the others from them and sends each request to its shard's leader (instead of --addr)." env:"FELIX_BROKERS" sep:","`
	Token   string        `help:"Token for a broker with authorization on (from felix token issue)." env:"FELIX_TOKEN"`
	Tenant  string        `help:"Tenant of the streams and caches named without one (default: the --token's tenant, else default)." env:"FELIX_TENANT"`
	Timeout time.Duration `help:"How long to wait for the broker to answer." default:"10s"`
	TLS     bool          `name:"tls" help:"Connect with TLS (to the broker's --tls-addr)." env:"FELIX_TLS"`
	TLSCA   string        `name:"tls-ca" help:"PEM file of the CA that signed the broker's certificate (default: the system's roots)." env:"FELIX_TLS_CA" type:"existingfile"`
	TLSName string        `name:"tls-server-name" help:"Name to verify the broker's certificate against (default: the host of --addr)." env:"FELIX_TLS_SERVER_NAME"`
}

// dial connects a cluster client to the first of --brokers (or --addr)
// that answers.
func (b *brokerFlags) dial(ctx context.Context) (*client.ClusterClient, error) {
	opts := []client.Option{client.WithName("felix-cli")}
	if b.Token != "" {
		opts = append(opts, client.WithToken(b.Token))
	}
	if b.TLS || b.TLSCA != "" {
		cfg, err := b.tlsConfig()
		if err != nil {
			return nil, err
		}
		if len(b.Brokers) > 0 && b.TLSName == "" {
			cfg.ServerName = "" // each broker's certificate is checked against its own host
		}
		opts = append(opts, client.WithTLS(cfg))
	}
	seeds := b.seeds()
	c, err := client.DialCluster(ctx, seeds, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w%s", strings.Join(seeds, ", "), err, dialHint(err))
	}
	return c, nil
}

// seeds are --brokers, or --addr when none is given.
func (b *brokerFlags) seeds() []string {
	var out []string
	for _, a := range b.Brokers {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return []string{b.Addr}
	}
	return out
}

// tlsConfig trusts --tls-ca when given, the system's roots otherwise.
func (b *brokerFlags) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: b.TLSName}
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(b.Addr)
		if err != nil {
			return nil, fmt.Errorf("--addr %q: %w", b.Addr, err)
		}
		cfg.ServerName = host
	}
	if b.TLSCA != "" {
		pem, err := os.ReadFile(b.TLSCA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", b.TLSCA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// stream parses "[tenant/]namespace/name".
func (b *brokerFlags) stream(spec string) (client.Stream, error) {
	parts := strings.Split(spec, "/")
	switch len(parts) {
	case 2:
		return client.Stream{Tenant: b.tenant(), Namespace: parts[0], Name: parts[1]}, nil
	case 3:
		return client.Stream{Tenant: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	}
	return client.Stream{}, fmt.Errorf("stream %q: write namespace/name or tenant/namespace/name", spec)
}

// tenant is --tenant, else the tenant the --token is for, else "default".
func (b *brokerFlags) tenant() string {
	if b.Tenant != "" {
		return b.Tenant
	}
	if b.Token != "" {
		if c, err := auth.UnverifiedClaims(b.Token); err == nil && c.Tenant != "" {
			return c.Tenant
		}
	}
	return "default"
}

// withClient dials, runs do within the --timeout, and closes.
func (b *brokerFlags) withClient(do func(ctx context.Context, cl *client.ClusterClient) error) error {
	ctx, cancel := b.context()
	defer cancel()
	cl, err := b.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	return do(ctx, cl)
}

func (b *brokerFlags) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.Timeout)
}
