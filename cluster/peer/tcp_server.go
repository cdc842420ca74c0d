package peer

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// server is the listening side of a TCP transport: a gnet engine of its
// own on Config.Addr. OnOpen, OnTraffic and OnClose run on the
// connection's event loop.
type server struct {
	gnet.BuiltinEventEngine
	t  *TCP
	mu sync.Mutex // guards unshaken
	// unshaken are the connections still waiting for their PEER_HELLO,
	// with when they opened: the ticker closes those past
	// Config.HandshakeTimeout, so a connection that never handshakes
	// holds nothing for long.
	unshaken map[*serverConn]time.Time
	eng      gnet.Engine
	addr     net.Addr
	hold     listenerHold
	booted   chan struct{}
	runDone  chan struct{}
	runErr   error
}

// serverReadBufferBytes is each event loop's read buffer: a frame that
// arrives whole in one read is handled in place.
const serverReadBufferBytes = 256 << 10

func newServer(t *TCP) *server {
	return &server{t: t, unshaken: map[*serverConn]time.Time{}, booted: make(chan struct{}), runDone: make(chan struct{})}
}

// start runs the engine and returns once its listener is bound.
func (s *server) start() error {
	opts := []gnet.Option{
		gnet.WithMulticore(s.t.cfg.EventLoops > 1), gnet.WithNumEventLoop(s.t.cfg.EventLoops),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay), gnet.WithReuseAddr(true), gnet.WithTicker(true),
		gnet.WithReadBufferCap(serverReadBufferBytes), gnet.WithLogger(gnetLogger{s.t.cfg.Logger}),
	}
	go func() {
		s.runErr = gnet.Run(s, "tcp://"+s.t.cfg.Addr, opts...)
		close(s.runDone)
	}()
	select {
	case <-s.booted:
		return nil
	case <-s.runDone:
		return fmt.Errorf("felix/peer: listening on %s: %w", s.t.cfg.Addr, s.runErr)
	}
}

// stop shuts the listener (so that nothing accepted is left unserved) and
// stops the engine, closing every connection.
func (s *server) stop() {
	defer s.hold.release()
	if s.hold.shut() {
		select {
		case <-s.runDone:
			return
		case <-time.After(listenerShutWaitMax):
		}
	}
	done, cancel := context.WithCancel(context.Background())
	cancel() // gnet's Stop then only signals; runDone says when it is over
	_ = s.eng.Stop(done)
	<-s.runDone
}

// listenerShutWaitMax bounds the wait for gnet to stop by itself once its
// listener is shut; past it the engine is told to stop.
const listenerShutWaitMax = 2 * time.Second

func (s *server) OnBoot(eng gnet.Engine) gnet.Action {
	s.eng = eng
	s.hold = holdListener(eng)
	s.addr = s.hold.addr(s.t.cfg.Addr)
	close(s.booted)
	return gnet.None
}

func (s *server) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	sc := newServerConn(s.t, gc)
	gc.SetContext(sc)
	s.mu.Lock()
	s.unshaken[sc] = time.Now()
	s.mu.Unlock()
	return nil, gnet.None
}

// shaken is called on the loop once sc's handshake is answered, or it
// closes.
func (s *server) shaken(sc *serverConn) {
	s.mu.Lock()
	delete(s.unshaken, sc)
	s.mu.Unlock()
}

// OnTick closes the connections past their handshake timeout; on gnet's
// ticker goroutine.
func (s *server) OnTick() (time.Duration, gnet.Action) {
	limit := s.t.cfg.HandshakeTimeout
	now := time.Now()
	s.mu.Lock()
	for sc, opened := range s.unshaken {
		if now.Sub(opened) >= limit {
			delete(s.unshaken, sc)
			_ = sc.gc.Close()
		}
	}
	s.mu.Unlock()
	return max(limit/4, 10*time.Millisecond), gnet.None
}

func (s *server) OnTraffic(gc gnet.Conn) gnet.Action {
	sc, ok := gc.Context().(*serverConn)
	if !ok {
		return gnet.Close
	}
	sc.traffic()
	return gnet.None
}

func (s *server) OnClose(gc gnet.Conn, err error) gnet.Action {
	if sc, ok := gc.Context().(*serverConn); ok {
		s.shaken(sc)
		sc.out.markClosed()
		if err != nil {
			s.t.cfg.Logger.Debug("peer connection closed", "peer", sc.ses.peer, "err", err)
		}
	}
	return gnet.None
}

// gnetLogger sends gnet's logging to the transport's: its chatter to
// Debug.
type gnetLogger struct {
	l interface{ Debug(string, ...any) }
}

func (g gnetLogger) Debugf(format string, args ...any) { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Infof(format string, args ...any)  { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Errorf(format string, args ...any) { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Fatalf(format string, args ...any) { g.l.Debug(fmt.Sprintf(format, args...)) }
