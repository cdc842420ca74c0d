package netio

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// handler is the server's gnet.EventHandler. OnOpen, OnTraffic and OnClose
// run on the connection's event loop; OnTick on gnet's ticker goroutine.
type handler struct {
	gnet.BuiltinEventEngine
	s *Server
}

func (h *handler) OnBoot(eng gnet.Engine) gnet.Action {
	h.s.boot(eng)
	return gnet.None
}

func (h *handler) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	if h.s.stopping.Load() {
		return nil, gnet.Close
	}
	if refusal := h.s.admitConn(); refusal != nil {
		return refusal, gnet.Close
	}
	c := h.s.openConn(gc)
	c.out.fd = socketFD(gc)
	gc.SetContext(c)
	return nil, gnet.None
}

// openConn starts serving a connection on either transport, admitted
// (admitConn): register it and count it. On the connection's loop.
func (s *Server) openConn(t transport) *conn {
	c := newConn(s, t)
	s.register(c)
	s.cfg.Metrics.ConnectionsOpened.Add(1)
	s.cfg.Metrics.ConnectionsActive.Add(1)
	return c
}

// closeConn is a connection's end on either transport, on its loop: drop
// what waits for the socket, end the subscriptions, forget it.
func (s *Server) closeConn(c *conn, err error) {
	c.closed()
	c.releaseAuth()
	s.unregister(c)
	s.releaseSlot()
	s.cfg.Metrics.ConnectionsClosed.Add(1)
	s.cfg.Metrics.ConnectionsActive.Add(-1)
	if err != nil {
		s.cfg.Logger.Debug("connection closed", "remote", c.remote, "err", err)
	}
}

func (h *handler) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, ok := gc.Context().(*conn)
	if !ok {
		return gnet.None
	}
	h.s.closeConn(c, err)
	return gnet.None
}

func (h *handler) OnTraffic(gc gnet.Conn) gnet.Action {
	c, ok := gc.Context().(*conn)
	if !ok {
		return gnet.Close
	}
	return c.traffic()
}

func (h *handler) OnTick() (time.Duration, gnet.Action) {
	h.s.sweep(h.s.cfg.Now())
	return h.s.cfg.tickInterval(), gnet.None
}

// gnetLogger sends gnet's own logging to the server's slog.Logger; gnet's
// chatter (loop start and stop) goes to Debug.
// Once the server stops, gnet's errors go to Debug too: its reactor reports
// the accept that fails on the listener shutListener shut.
type gnetLogger struct {
	l        *slog.Logger
	stopping *atomic.Bool
}

func (g gnetLogger) Debugf(format string, args ...any) { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Infof(format string, args ...any)  { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.l.Warn(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Errorf(format string, args ...any) { g.errorf(format, args...) }
func (g gnetLogger) Fatalf(format string, args ...any) { g.errorf(format, args...) }

func (g gnetLogger) errorf(format string, args ...any) {
	if g.stopping.Load() {
		g.l.Debug(fmt.Sprintf(format, args...))
		return
	}
	g.l.Error(fmt.Sprintf(format, args...))
}
