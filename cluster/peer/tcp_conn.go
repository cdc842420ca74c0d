package peer

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// dialConn is one connection a link dialled, after its handshake: the
// socket, and the signals of its two goroutines (reader, flusher).
type dialConn struct {
	s      *sock
	rest   []byte        // bytes read past the handshake's answer
	kickCh chan struct{} // capacity 1: wakes the flusher
	stop   chan struct{} // closed by close
	once   sync.Once
}

func newDialConn(nc net.Conn, writeTimeout time.Duration, rest []byte) *dialConn {
	return &dialConn{s: newSock(nc, writeTimeout), rest: rest, kickCh: make(chan struct{}, 1), stop: make(chan struct{})}
}

func (dc *dialConn) kick() {
	select {
	case dc.kickCh <- struct{}{}:
	default:
	}
}

func (dc *dialConn) close() {
	dc.once.Do(func() {
		close(dc.stop)
		dc.s.close()
	})
}

// connect resolves, dials and handshakes with peer; addr is the address
// it resolved ("" when Resolve failed), also when the dial failed.
func (t *TCP) connect(peer string) (dc *dialConn, ses session, addr string, err error) {
	addr, err = t.cfg.Resolve(peer)
	if err != nil {
		return nil, session{}, "", wrap(ErrUnreachable, err)
	}
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.DialTimeout)
	nc, err := t.cfg.dial(ctx, addr)
	cancel()
	if err != nil {
		return nil, session{}, addr, wrap(ErrUnreachable, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	ses, rest, err := t.handshake(nc, peer)
	if err != nil {
		_ = nc.Close()
		return nil, session{}, addr, err
	}
	return newDialConn(nc, t.cfg.WriteTimeout, rest), ses, addr, nil
}

// handshakeBytesMax bounds what the handshake's answer may be.
const handshakeBytesMax = 64 << 10

// handshake sends PEER_HELLO and reads the answer: PEER_HELLO_OK, checked
// (the broker it names, the version, the features), or ERROR, a refusal.
// Close ends it at once.
func (t *TCP) handshake(nc net.Conn, peer string) (session, []byte, error) {
	stop := context.AfterFunc(t.ctx, func() { _ = nc.SetDeadline(time.Now()) })
	defer stop()
	if err := nc.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout)); err != nil {
		return session{}, nil, wrap(ErrUnreachable, err)
	}
	if _, err := nc.Write(wire.AppendPeerHello(nil, 1, t.me.hello())); err != nil {
		return session{}, nil, wrap(ErrUnreachable, err)
	}
	f, rest, err := readFrame(nc, wire.Limits{FrameBytesMax: handshakeBytesMax})
	if err != nil {
		return session{}, nil, wrap(ErrUnreachable, err)
	}
	ses, err := t.answerOfHello(peer, f)
	if err != nil {
		return session{}, nil, err
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return session{}, nil, wrap(ErrUnreachable, err)
	}
	return ses, rest, nil
}

// answerOfHello reads the handshake's answer.
func (t *TCP) answerOfHello(peer string, f wire.Frame) (session, error) {
	switch f.Type {
	case wire.TypePeerHelloOK:
		var ok wire.PeerHelloOK
		if err := ok.Decode(f, wire.Limits{}); err != nil {
			return session{}, wrap(ErrRefused, err)
		}
		return t.me.check(peer, ok)
	case wire.TypeError:
		var e wire.Error
		if err := e.Decode(f, wire.Limits{}); err != nil {
			return session{}, wrap(ErrRefused, err)
		}
		return session{}, wrap(ErrRefused, &e)
	}
	return session{}, wrap(ErrRefused, &wire.Error{Code: wire.CodeMalformedFrame,
		Message: "the answer to PEER_HELLO is " + f.Type.String()})
}

// readFrame reads from nc until one whole frame is in; rest is what came
// after it.
func readFrame(nc net.Conn, lim wire.Limits) (f wire.Frame, rest []byte, err error) {
	r := wire.Reader{Limits: lim}
	buf := make([]byte, 0, 512)
	for {
		f, need, err := r.Next(buf)
		if err != nil {
			return wire.Frame{}, nil, err
		}
		if need == 0 {
			return f, buf[f.Size():], nil
		}
		buf = growFor(buf, need)
		n, err := nc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil && n == 0 {
			return wire.Frame{}, nil, err
		}
	}
}

// growFor makes room in buf for need more bytes.
func growFor(buf []byte, need int) []byte {
	if cap(buf)-len(buf) >= need {
		return buf
	}
	bigger := make([]byte, len(buf), len(buf)+max(need, len(buf)))
	copy(bigger, buf)
	return bigger
}

var errAnswerWithoutRequest = errors.New("an answer with request id 0")
