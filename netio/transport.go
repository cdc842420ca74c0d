package netio

import (
	"net"

	"github.com/panjf2000/gnet/v2"
)

// transport is what a connection needs of its socket: the part of
// gnet.Conn the protocol logic (conn, outbox) uses. A gnet connection is
// one as it is; a TLS connection served by goroutines (tlsTransport) is the
// other. Both run the same frame handling, answer path and outbox.
//
// "The loop" below is, for gnet, the connection's event loop; for TLS, the
// connection's loop mutex (traffic, write callbacks and runnables run under
// it, one at a time).
type transport interface {
	// InboundBuffered, Peek and Discard read the bytes received and not
	// yet consumed. Loop only, inside traffic.
	InboundBuffered() int
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	// Write takes b (copying what it cannot send at once) and never
	// blocks. Loop only.
	Write(b []byte) (int, error)
	// AsyncWrite writes b later and then calls callback on the loop; b is
	// the transport's until then. Any goroutine; never blocks.
	AsyncWrite(b []byte, callback gnet.AsyncCallback) error
	// OutboundBuffered is what Write accepted and the socket has not yet
	// taken. Loop only.
	OutboundBuffered() int
	// Close closes the connection once what was written is sent (bounded);
	// the server's close handling runs after, on the loop. Any goroutine.
	Close() error
	RemoteAddr() net.Addr
	// EventLoop runs a Runnable on the loop (Execute); nothing else of
	// gnet.EventLoop is used.
	EventLoop() gnet.EventLoop
}

var _ transport = gnet.Conn(nil)
