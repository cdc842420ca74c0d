package peer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Config configures a TCP transport. ID, Addr and Resolve are required;
// every other zero field takes its default.
type Config struct {
	// ID is this broker's id: 1 to 255 bytes, unique in the cluster.
	ID string
	// Addr is the address the peer listener binds, "host:port" (port 0:
	// any free one; Addr() then says which).
	Addr string
	// Resolve returns the peer address of a broker, at each dial: the
	// control plane's registrations, say. An error fails the requests
	// waiting for that dial with ErrUnreachable. It is also asked by each
	// request while the link backs off after a failed dial: an address
	// other than the one that failed ends the backoff (the peer came back
	// elsewhere). It must not block, and is called concurrently.
	Resolve func(broker string) (addr string, err error)
	// Handler serves peers' requests from the first (Handle replaces it);
	// nil answers them overloaded until Handle sets one.
	Handler Handler

	// Features are the client protocol features this broker serves to
	// peers (the frames a forwarded request may be). Default and minimum
	// wire.PeerFeaturesRequired.
	Features wire.Features
	// FrameBytesMax bounds every frame, both ways: the requests this
	// broker accepts and the answers it reads. A peer's own limit, from
	// its handshake, bounds what is sent to it. Default
	// DefaultFrameBytesMax.
	FrameBytesMax int
	// InflightMax bounds the requests awaiting answers on one link (to
	// one peer), and the requests one peer connection may have with this
	// broker's handler. Default DefaultInflightMax, at most
	// InflightMaxCeiling.
	InflightMax int

	DialTimeout time.Duration // default 2 s
	// HandshakeTimeout bounds a dial's wait from connect to PEER_HELLO_OK,
	// and the listener's for a connection's PEER_HELLO. Default 2 s.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one write to a peer; a peer that does not read
	// for that long loses the connection. Default 10 s.
	WriteTimeout time.Duration
	// BackoffBase and BackoffMax shape the wait after failed dials in a
	// row (full jitter, see backoff). Defaults 20 ms and 2 s.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// TimeoutTick is how often Call.Timeout is checked: a request times
	// out up to one tick late. Default 5 ms.
	TimeoutTick time.Duration
	// Logger receives connection failures and refusals (Debug); nil
	// discards them.
	Logger *slog.Logger

	// For tests: the dialer, the backoff's random numbers, and a change
	// to what this broker says in its handshake.
	dial   func(ctx context.Context, addr string) (net.Conn, error)
	jitter func() float64
	hook   func(*speaks)
}

// Defaults and bounds.
const (
	// DefaultFrameBytesMax is a peer frame's default bound: room for a
	// client's largest frame (wire.DefaultFrameBytesMax) and what a
	// forwarding broker adds to it, and for replication's batches.
	DefaultFrameBytesMax = 16 << 20
	// DefaultInflightMax is the default bound on a link's requests in
	// flight.
	DefaultInflightMax = 1024
)

var errConfig = errors.New("felix/peer: invalid config")

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.ID == "" || len(c.ID) > wire.DefaultNameBytesMax:
		return c, fmt.Errorf("%w: ID %q must be 1 to 255 bytes", errConfig, c.ID)
	case c.Addr == "":
		return c, fmt.Errorf("%w: no Addr to listen on", errConfig)
	case c.Resolve == nil:
		return c, fmt.Errorf("%w: no Resolve", errConfig)
	case c.InflightMax < 0 || c.InflightMax > InflightMaxCeiling:
		return c, fmt.Errorf("%w: InflightMax %d outside 0..%d", errConfig, c.InflightMax, InflightMaxCeiling)
	}
	c.Features |= wire.PeerFeaturesRequired
	c.FrameBytesMax = wire.Limits{FrameBytesMax: orInt(c.FrameBytesMax, DefaultFrameBytesMax)}.Effective().FrameBytesMax
	c.InflightMax = orInt(c.InflightMax, DefaultInflightMax)
	c.DialTimeout = orDur(c.DialTimeout, 2*time.Second)
	c.HandshakeTimeout = orDur(c.HandshakeTimeout, 2*time.Second)
	c.WriteTimeout = orDur(c.WriteTimeout, 10*time.Second)
	c.BackoffBase = orDur(c.BackoffBase, 20*time.Millisecond)
	c.BackoffMax = orDur(c.BackoffMax, 2*time.Second)
	c.TimeoutTick = orDur(c.TimeoutTick, 5*time.Millisecond)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.dial == nil {
		var d net.Dialer
		c.dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	if c.jitter == nil {
		c.jitter = rand.Float64
	}
	return c, nil
}

func (c Config) speaks() speaks {
	s := speaks{id: c.ID, versionMin: wire.PeerProtocolVersionMin, versionMax: wire.PeerProtocolVersion,
		features: c.Features, frameBytesMax: c.FrameBytesMax, inflightMax: c.InflightMax}
	if c.hook != nil {
		c.hook(&s)
	}
	return s
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orDur(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}
