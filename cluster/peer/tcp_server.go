package peer

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// server is the listening side of a TCP transport: a gnet engine of its
// own on Config.Addr. OnOpen, OnTraffic and OnClose run on the
// connection's event loop.
type server struct {
	gnet.BuiltinEventEngine
	t       *TCP
	eng     gnet.Engine
	addr    net.Addr
	hold    listenerHold
	booted  chan struct{}
	runDone chan struct{}
	runErr  error
}

// serverReadBufferBytes is each event loop's read buffer: a frame that
// arrives whole in one read is handled in place.
const serverReadBufferBytes = 256 << 10

func newServer(t *TCP) *server {
	return &server{t: t, booted: make(chan struct{}), runDone: make(chan struct{})}
}

// start runs the engine and returns once its listener is bound.
func (s *server) start() error {
	opts := []gnet.Option{
		gnet.WithMulticore(s.t.cfg.EventLoops > 1), gnet.WithNumEventLoop(s.t.cfg.EventLoops),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay), gnet.WithReuseAddr(true),
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
	gc.SetContext(newServerConn(s.t, gc))
	return nil, gnet.None
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
