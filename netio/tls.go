package netio

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ErrTLSConfig: Config.TLSAddr is set without a TLSConfig holding a
// certificate.
var ErrTLSConfig = errors.New("felix/netio: Config.TLSAddr needs a TLSConfig with a certificate")

// tlsListener is the TLS client listener: a standard accept loop, one
// tlsTransport (a reader and a writer goroutine) per connection, feeding
// the same conn, handlers and outbox as the gnet path.
type tlsListener struct {
	s      *Server
	ln     net.Listener
	wg     sync.WaitGroup // the accept loop and every connection's reader
	mu     sync.Mutex     // guards live
	live   map[*tlsTransport]struct{}
	closed bool
}

// startTLS listens on Config.TLSAddr, if set.
func (s *Server) startTLS() error {
	if s.cfg.TLSAddr == "" {
		return nil
	}
	ln, err := tls.Listen("tcp", s.cfg.TLSAddr, s.cfg.TLSConfig)
	if err != nil {
		return fmt.Errorf("felix/netio: TLS listener on %s: %w", s.cfg.TLSAddr, err)
	}
	s.tls = &tlsListener{s: s, ln: ln, live: map[*tlsTransport]struct{}{}}
	s.tls.wg.Add(1)
	go s.tls.acceptLoop()
	s.cfg.Logger.Info("listening for TLS", "addr", ln.Addr().String())
	return nil
}

// TLSAddr is the address the TLS listener is bound to (nil without one).
func (s *Server) TLSAddr() net.Addr {
	if s.tls == nil {
		return nil
	}
	return s.tls.ln.Addr()
}

func (l *tlsListener) acceptLoop() {
	defer l.wg.Done()
	var backoff time.Duration
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// EMFILE and the like: wait a little, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			l.s.cfg.Logger.Warn("TLS accept failed; retrying", "err", err, "in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		l.wg.Add(1)
		go l.serve(nc.(*tls.Conn))
	}
}

// serve runs the TLS handshake, within the handshake timeout, then the
// connection.
func (l *tlsListener) serve(nc *tls.Conn) {
	defer l.wg.Done()
	if tc, ok := nc.NetConn().(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		if n := l.s.cfg.sendBufferBytes; n > 0 {
			_ = tc.SetWriteBuffer(n)
		}
	}
	_ = nc.SetDeadline(time.Now().Add(l.s.cfg.HandshakeTimeout))
	if err := nc.Handshake(); err != nil {
		l.s.cfg.Logger.Debug("TLS handshake failed", "remote", nc.RemoteAddr().String(), "err", err)
		l.s.cfg.Metrics.HandshakesFailed.Add(1)
		_ = nc.Close()
		return
	}
	_ = nc.SetDeadline(time.Time{})
	t := newTLSTransport(nc)
	if !l.track(t) || l.s.stopping.Load() {
		l.untrack(t)
		_ = nc.Close()
		return
	}
	defer l.untrack(t)
	if refusal := l.s.admitConn(); refusal != nil {
		_ = nc.SetWriteDeadline(time.Now().Add(tlsCloseFlushTimeout))
		_, _ = nc.Write(refusal)
		_ = nc.Close()
		return
	}
	t.serve(l.s)
}

func (l *tlsListener) track(t *tlsTransport) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.live[t] = struct{}{}
	return true
}

func (l *tlsListener) untrack(t *tlsTransport) {
	l.mu.Lock()
	delete(l.live, t)
	l.mu.Unlock()
}

// stop closes the listener and every TLS connection (their answers were
// flushed by Stop before), and waits for their goroutines.
func (l *tlsListener) stop() {
	_ = l.ln.Close()
	l.mu.Lock()
	l.closed = true
	live := make([]*tlsTransport, 0, len(l.live))
	for t := range l.live {
		live = append(live, t)
	}
	l.mu.Unlock()
	for _, t := range live {
		t.kill(ErrStopped)
	}
	l.wg.Wait()
}
