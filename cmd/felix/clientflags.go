package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/felixbroker/felix/client"
)

// brokerFlags are what every client command needs to reach a broker.
type brokerFlags struct {
	Addr    string        `help:"Broker address." default:"127.0.0.1:7117" env:"FELIX_ADDR"`
	Token   string        `help:"Token for a broker with authorization on (from felix token issue)." env:"FELIX_TOKEN"`
	Tenant  string        `help:"Tenant of the streams named without one." default:"default" env:"FELIX_TENANT"`
	Timeout time.Duration `help:"How long to wait for the broker to answer." default:"10s"`
}

func (b *brokerFlags) dial(ctx context.Context) (*client.Client, error) {
	opts := []client.Option{client.WithName("felix-cli")}
	if b.Token != "" {
		opts = append(opts, client.WithToken(b.Token))
	}
	c, err := client.Dial(ctx, b.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w (is a broker running? `felix serve` or `make run`)", b.Addr, err)
	}
	return c, nil
}

// stream parses "[tenant/]namespace/name".
func (b *brokerFlags) stream(spec string) (client.Stream, error) {
	parts := strings.Split(spec, "/")
	switch len(parts) {
	case 2:
		return client.Stream{Tenant: b.Tenant, Namespace: parts[0], Name: parts[1]}, nil
	case 3:
		return client.Stream{Tenant: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	}
	return client.Stream{}, fmt.Errorf("stream %q: write namespace/name or tenant/namespace/name", spec)
}

func (b *brokerFlags) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.Timeout)
}
