package client

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Defaults of the Dial options.
const (
	DefaultDialTimeout   = 10 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	DefaultPingInterval  = 15 * time.Second
	DefaultInflightMax   = 4096
	DefaultClientName    = "felix-go"
	DefaultFeatures      = Features(wire.FeatureBinaryPublish | wire.FeaturePublishKeyed | cacheFeatures | queueFeatures | subscribeFeatures)
	defaultWriteBufBytes = 4 << 20
)

// Option configures Dial.
type Option func(*options)

type options struct {
	name         string
	token        []byte
	features     wire.Features
	limits       wire.Limits
	dialTimeout  time.Duration
	writeTimeout time.Duration
	pingInterval time.Duration
	inflightMax  int
	logger       *slog.Logger
	dialer       func(ctx context.Context, addr string) (net.Conn, error)
	tls          *tls.Config // nil: plain TCP
	retry        RetryPolicy
	onAsyncError func(error)
	randN        func(n int64) int64 // backoff jitter source; tests replace it
	clock        clock               // a ClusterClient's retries; tests replace it
}

func defaultOptions() options {
	return options{
		name:         DefaultClientName,
		features:     wire.Features(DefaultFeatures),
		dialTimeout:  DefaultDialTimeout,
		writeTimeout: DefaultWriteTimeout,
		pingInterval: DefaultPingInterval,
		inflightMax:  DefaultInflightMax,
		logger:       slog.New(slog.DiscardHandler),
		randN:        randInt64N,
		clock:        realClock{},
	}
}

// WithName sets the client name sent in HELLO, for the broker's logs and
// metrics (at most 255 bytes).
func WithName(name string) Option { return func(o *options) { o.name = name } }

// WithToken sets the tenant-scoped auth token sent in HELLO.
func WithToken(token string) Option { return func(o *options) { o.token = []byte(token) } }

// WithFeatures sets the feature bits the client offers in HELLO
// (DefaultFeatures: binary publish, keyed publish, the cache's bits,
// consumer groups and idempotent producers). Only what both peers
// offer is used; a client offering no FeaturePublishKeyed publishes keyed
// records as PUBLISH_JSON, which lands them on the same shards.
func WithFeatures(f Features) Option { return func(o *options) { o.features = wire.Features(f) } }

// WithLimits caps what the client accepts from the broker: a zero field
// takes the broker's announced limit, a set one the smaller of the two. A
// frame over the cap closes the connection.
func WithLimits(l Limits) Option { return func(o *options) { o.limits = l.wire() } }

// WithDialTimeout bounds connecting and the handshake, within the caller's
// context (DefaultDialTimeout).
func WithDialTimeout(d time.Duration) Option { return func(o *options) { o.dialTimeout = d } }

// WithWriteTimeout bounds one socket write; a broker that stops reading for
// longer loses the connection (DefaultWriteTimeout).
func WithWriteTimeout(d time.Duration) Option { return func(o *options) { o.writeTimeout = d } }

// WithPingInterval sets how often an idle connection pings the broker
// (DefaultPingInterval, or a third of the broker's idle timeout if that is
// shorter). A connection that hears nothing for two intervals is closed as
// lost. Zero or negative turns pinging off.
func WithPingInterval(d time.Duration) Option { return func(o *options) { o.pingInterval = d } }

// WithInflightMax bounds the requests awaiting an answer on one connection
// (DefaultInflightMax, or the broker's bound if smaller). A request beyond
// it waits for a slot, within its context.
func WithInflightMax(n int) Option { return func(o *options) { o.inflightMax = n } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithDialer replaces net.Dialer: a proxy, an in-memory pipe, a connection
// that records frames.
func WithDialer(dial func(ctx context.Context, addr string) (net.Conn, error)) Option {
	return func(o *options) { o.dialer = dial }
}

// WithRetryPolicy sets the policy PublishAtLeastOnce follows
// (DefaultRetryPolicy).
func WithRetryPolicy(p RetryPolicy) Option { return func(o *options) { o.retry = p } }

// WithAsyncErrorHandler receives errors nobody waits for: the refusal of a
// publish sent with AckNone. It runs on the connection's reader goroutine
// and must not block. Without one such errors are logged.
func WithAsyncErrorHandler(h func(error)) Option { return func(o *options) { o.onAsyncError = h } }
