package netio

import (
	"crypto/tls"
	"errors"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/producer"
	"log/slog"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// Config configures a Server. Zero fields take the defaults below, except
// Multicore, whose zero value means one event loop (DefaultConfig sets it).
type Config struct {
	// Addr is where the broker listens: "127.0.0.1:7117" by default; a port
	// of 0 picks a free one (Server.Addr says which).
	Addr string
	// AdvertiseAddr is the address BROKER_LIST and STREAM_INFO give clients;
	// empty means the address the listener is bound to.
	AdvertiseAddr string
	// Engine holds the streams. Required; the server never closes it.
	Engine *engine.Engine
	// Owner says which shards this broker leads, for subscribe redirects
	// (publishes ask the engine's own Ownership). Default engine.Alone.
	Owner engine.Ownership
	// Limits bound every frame the broker accepts and are announced in
	// HELLO_OK: frame size (default 4 MiB), batch count, key, name and
	// token lengths.
	Limits wire.Limits
	// HandshakeTimeout closes a connection that has not completed HELLO
	// (handshake_timeout). Default 5s.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection silent for this long (idle_timeout);
	// a client PINGs within it. Default 5m; negative means never.
	IdleTimeout time.Duration
	// FrameTimeout closes a connection whose frame, once its first byte
	// is in, is not whole within this (frame_timeout): bytes trickling in
	// are not activity. Default 30s; negative means never.
	FrameTimeout time.Duration
	// OutboundBytesMax is each connection's budget of answer and event
	// bytes waiting for its socket (see the package doc). Default 8 MiB.
	OutboundBytesMax int
	// InboundBytesMax bounds the bytes the unfinished frames of every
	// connection together may hold (inbound.go); a connection whose frame
	// would take more is closed with overloaded. Default 256 MiB.
	InboundBytesMax int
	// ConnectionsMax bounds the open client connections, TLS ones
	// included, with auth on or off; one more is answered ERROR overloaded
	// and closed. Default 4,096.
	ConnectionsMax int
	// Multicore runs one gnet event loop per processor but one
	// (GOMAXPROCS-1, at least one), or EventLoops of them; false runs one
	// loop. A loop waiting in epoll_wait holds a processor (see "Event
	// loops and processors" in the package doc), so one is left to the
	// rest.
	Multicore bool
	// EventLoops fixes the number of event loops; 0: as Multicore says.
	EventLoops int
	// BrokerID names this broker in HELLO_OK, BROKER_LIST and STREAM_INFO;
	// default the bound address.
	BrokerID string
	Logger   *slog.Logger
	// Authenticator checks HELLO's token and returns the principal every
	// later request is checked against. nil: auth off, everything allowed.
	Authenticator Authenticator
	// Quotas, when set, limits each tenant: connections (counted at HELLO,
	// so only with an Authenticator), publish bytes per second and stored
	// bytes. nil: no limits. See Quotas.
	Quotas Quotas
	// TLSAddr, when set, is a second listener, for TLS clients: the same
	// protocol into the same engine through crypto/tls (gnet has no TLS),
	// with a reader and a writer goroutine per connection. Port 0 picks a
	// free one (Server.TLSAddr says which). TLSConfig must hold the
	// certificate.
	TLSAddr   string
	TLSConfig *tls.Config
	// Metrics, when set, counts connections, requests and bytes.
	Metrics *Metrics
	// Forwarder, when set, forwards the cache and counter requests for a
	// shard another broker leads (Owner says which) to that broker, and
	// answers with its answer; nil answers them not_leader. A publish's
	// parts are forwarded by the engine's own Forwarder
	// (engine.Options.Forward), normally the same one. Subscribes, watches
	// and group polls are never forwarded: they are redirected (see
	// "Forwarding" in the package doc).
	Forwarder *Forwarder
	// Brokers, when set, lists the brokers of this broker's cluster for
	// BROKER_LIST (a client given one seed learns the others); nil answers
	// with this broker alone.
	Brokers func() []wire.BrokerInfo

	// Optional components. Each one set turns on its frames and feature
	// bits; nil leaves them refused as not negotiated.
	Caches    *cache.Store      // caches, watches, counters
	Groups    *group.Manager    // consumer groups
	Producers *producer.Manager // idempotent producers
	// Now is the clock the handshake and idle timers read; default
	// time.Now. Tests inject a fake one.
	Now func() time.Time

	// sendBufferBytes sets the sockets' SO_SNDBUF (tests shrink it to fill
	// a socket quickly); 0 leaves the system's.
	sendBufferBytes int
}

// Defaults.
const (
	DefaultAddr             = "127.0.0.1:7117"
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultIdleTimeout      = 5 * time.Minute
	DefaultFrameTimeout     = 30 * time.Second
	DefaultOutboundBytesMax = 8 << 20
	DefaultInboundBytesMax  = 256 << 20
	DefaultConnectionsMax   = 4096
)

// DefaultConfig is the configuration `felix serve` starts from: every
// default, multicore loops, for the engine given.
func DefaultConfig(e *engine.Engine) Config {
	return Config{Addr: DefaultAddr, Engine: e, Multicore: true}
}

// Configuration errors.
var (
	ErrNoEngine = errors.New("felix/netio: Config.Engine is required")
	ErrBrokerID = errors.New("felix/netio: Config.BrokerID is longer than 255 bytes")
)

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Engine == nil {
		return c, ErrNoEngine
	}
	if len(c.BrokerID) > wire.DefaultNameBytesMax {
		return c, ErrBrokerID
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.TLSAddr != "" && (c.TLSConfig == nil || len(c.TLSConfig.Certificates) == 0 && c.TLSConfig.GetCertificate == nil) {
		return c, ErrTLSConfig
	}
	if c.Owner == nil {
		c.Owner = engine.Alone{}
	}
	c.Limits = c.Limits.Effective()
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.FrameTimeout == 0 {
		c.FrameTimeout = DefaultFrameTimeout
	}
	if c.OutboundBytesMax <= 0 {
		c.OutboundBytesMax = DefaultOutboundBytesMax
	}
	if c.InboundBytesMax <= 0 {
		c.InboundBytesMax = DefaultInboundBytesMax
	}
	if c.ConnectionsMax <= 0 {
		c.ConnectionsMax = DefaultConnectionsMax
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = new(Metrics)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// tickInterval is how often the timer sweep runs: a quarter of the shorter
// timeout, between 10ms and 1s.
func (c Config) tickInterval() time.Duration {
	d := c.HandshakeTimeout
	if c.IdleTimeout > 0 {
		d = min(d, c.IdleTimeout)
	}
	return min(max(d/4, 10*time.Millisecond), time.Second)
}

// idleTimeoutMillis is what HELLO_OK announces: 0 for never.
func (c Config) idleTimeoutMillis() uint32 {
	if c.IdleTimeout < 0 {
		return 0
	}
	return uint32(min(c.IdleTimeout.Milliseconds(), 1<<32-1))
}
