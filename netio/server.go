package netio

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/netio/wire"
)

// serverFeatures are what this broker serves: binary publishes, keyed
// ones, BROKER_LIST (answered with this broker alone), subscriptions
// from a time and until their end, and control records pushed as events.
const serverFeatures = wire.FeatureBinaryPublish | wire.FeaturePublishKeyed | wire.FeatureDiscovery | wire.FeatureSubscribeBounds |
	wire.FeatureControlEvents

// features is what this server advertises: the base set, plus the bits of
// every optional component its Config carries (each component's file adds
// its own through featureHooks).
func (s *Server) features() wire.Features {
	f := serverFeatures
	for _, hook := range featureHooks {
		f |= hook(&s.cfg)
	}
	return f
}

// featureHooks report the feature bits an optional component serves, given
// the configuration; each feature's file registers one in an init func.
var featureHooks []func(*Config) wire.Features

// readBufferBytes is each event loop's read buffer: a frame that arrives
// whole in one read is decoded in place.
const readBufferBytes = 256 << 10

// Server is the broker's client-protocol server: gnet event loops that
// decode frames, hand publishes to the engine and stream subscriptions
// back. See the package doc for its goroutines and their state.
type Server struct {
	cfg     Config
	handler *handler
	caches  *cacheFrontend // cache.go; nil without Config.Caches
	relays  relaySet       // relay connections: forwarded requests (relay.go)

	mu      sync.Mutex // guards conns, started
	conns   map[*conn]struct{}
	started bool

	stopping atomic.Bool
	listener listenerHold // set in OnBoot; shut by Stop
	clock    atomic.Int64 // unix ns of the last sweep: the connections' coarse clock
	work     tracker      // publishes awaiting their answer, live deliverers

	connSlots   atomic.Int64 // connections admitted and not yet closed (connlimit.go)
	inboundHeld atomic.Int64 // bytes unfinished frames hold (inbound.go)

	addr    net.Addr
	advAddr string
	eng     gnet.Engine
	tls     *tlsListener // nil without Config.TLSAddr
	authn   authState
	booted  chan struct{}
	runDone chan struct{}
	runErr  error
}

// NewServer checks cfg and returns a server that is not yet listening.
func NewServer(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, conns: map[*conn]struct{}{}, work: newTracker(),
		booted: make(chan struct{}), runDone: make(chan struct{})}
	s.handler = &handler{s: s}
	s.caches = newCacheFrontend(s)
	s.clock.Store(cfg.Now().UnixNano())
	return s, nil
}

// Start listens and starts the event loops, which run in their own
// goroutines; it returns once the listener is bound.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return ErrStarted
	}
	s.started = true
	s.mu.Unlock()
	opts := []gnet.Option{
		gnet.WithMulticore(s.cfg.Multicore), gnet.WithNumEventLoop(s.cfg.eventLoops()),
		gnet.WithTicker(true), gnet.WithTCPNoDelay(gnet.TCPNoDelay), gnet.WithReuseAddr(true),
		gnet.WithReadBufferCap(readBufferBytes), gnet.WithLogger(gnetLogger{l: s.cfg.Logger, stopping: &s.stopping}),
	}
	if s.cfg.sendBufferBytes > 0 {
		opts = append(opts, gnet.WithSocketSendBuffer(s.cfg.sendBufferBytes))
	}
	go func() {
		s.runErr = gnet.Run(s.handler, "tcp://"+s.cfg.Addr, opts...)
		close(s.runDone)
	}()
	select {
	case <-s.booted:
		s.cfg.Logger.Info("listening", "addr", s.addr.String(), "multicore", s.cfg.Multicore)
		if err := s.startTLS(); err != nil {
			s.stopping.Store(true)
			s.shutdownLoops()
			return err
		}
		return nil
	case <-s.runDone:
		return fmt.Errorf("felix/netio: listening on %s: %w", s.cfg.Addr, s.runErr)
	}
}

// boot runs in OnBoot: the listener is bound, so its address is known.
func (s *Server) boot(eng gnet.Engine) {
	s.eng = eng
	s.listener = holdListener(eng)
	addr, err := boundAddr(eng)
	if err != nil {
		s.cfg.Logger.Warn("cannot read the bound address; reporting the configured one", "err", err)
		addr, _ = net.ResolveTCPAddr("tcp", s.cfg.Addr)
	}
	s.addr = addr
	s.advAddr = s.cfg.AdvertiseAddr
	if s.advAddr == "" && addr != nil {
		s.advAddr = addr.String()
	}
	if s.cfg.BrokerID == "" {
		s.cfg.BrokerID = s.advAddr
	}
	close(s.booted)
}

// Addr is the address the server listens on (nil before Start).
func (s *Server) Addr() net.Addr {
	select {
	case <-s.booted:
		return s.addr
	default:
		return nil
	}
}

// Metrics are the server's counters.
func (s *Server) Metrics() *Metrics { return s.cfg.Metrics }

// Stop shuts the server down gracefully: it refuses new connections and
// requests (shutting_down), forwarded ones included, ends every
// subscription with SUBSCRIPTION_ENDED shutting_down, waits for the
// publishes in flight (forwarded or relayed too) to be answered and every
// answer written, then closes the relay connections and the client
// connections and stops the loops. When ctx ends first it stops at once and returns ctx's
// error. The engine stays open: its owner closes it after.
func (s *Server) Stop(ctx context.Context) error {
	select {
	case <-s.booted:
	default:
		return ErrNotStarted
	}
	if s.stopping.Swap(true) {
		<-s.runDone
		return nil
	}
	s.cfg.Logger.Info("client server stopping", "connections", s.cfg.Metrics.ConnectionsActive.Load())
	for _, c := range s.connections() {
		c.endSubscriptions(errShuttingDown)
		c.endWatches(errShuttingDown)
		c.endGroups(errShuttingDown)
	}
	err := s.work.wait(ctx)
	if err == nil {
		err = s.waitFlushed(ctx)
	}
	if rerr := s.stopRelays(ctx); err == nil {
		err = rerr
	}
	s.shutdownLoops()
	return err
}

// waitFlushed waits until every connection's answers have reached its
// socket (a relay connection's, its peer).
func (s *Server) waitFlushed(ctx context.Context) error {
	poll := drainPollFirst
	for {
		pending := false
		conns := s.connections()
		for _, rc := range s.relays.all() {
			conns = append(conns, rc.c)
		}
		for _, c := range conns {
			if !c.out.flushed() {
				pending = true
				c.out.probe()
			}
		}
		if !pending {
			return nil
		}
		select {
		case <-time.After(poll):
			poll = min(2*poll, drainPollMax)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// shutdownLoops stops gnet (closing every connection) and waits for it.
func (s *Server) shutdownLoops() {
	if s.tls != nil {
		s.tls.stop()
	}
	defer s.listener.release()
	if s.listener.shut() {
		select {
		case <-s.runDone: // the reactor saw its listener go and stopped gnet
			return
		case <-time.After(listenerShutWaitMax):
		}
	}
	// gnet's Stop polls for completion every half second; a context that is
	// already done makes it only signal, and runDone says when it is over.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.eng.Stop(done)
	<-s.runDone
}

// listenerShutWaitMax bounds the wait for gnet to stop by itself once its
// listener is shut; past it the engine is told to stop.
const listenerShutWaitMax = 2 * time.Second

func (s *Server) register(c *conn) {
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// connections is a snapshot of the open connections.
func (s *Server) connections() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// ConnInfo describes one open connection.
type ConnInfo struct {
	Remote        string
	ClientName    string
	Features      wire.Features // negotiated; 0 before HELLO
	PublishJSON   uint64        // PUBLISH_JSON frames received
	PublishBinary uint64        // PUBLISH and PUBLISH_BATCH frames received
	Subscriptions int
	OutboundBytes int64 // the outbound budget in use
	OutboundPeak  int64 // its high-water mark
}

// Connections describes every open connection.
func (s *Server) Connections() []ConnInfo {
	conns := s.connections()
	out := make([]ConnInfo, 0, len(conns))
	for _, c := range conns {
		out = append(out, c.info())
	}
	return out
}
