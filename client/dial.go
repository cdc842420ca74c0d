package client

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// dialConn connects and performs the handshake within ctx.
func dialConn(ctx context.Context, addr string, o *options, ids *atomic.Uint64) (*conn, error) {
	if err := checkHello(o); err != nil {
		return nil, err
	}
	if o.dialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.dialTimeout)
		defer cancel()
	}
	nc, err := dialNet(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	ok, rest, err := handshake(nc, o)
	if !stop() || err != nil {
		_ = nc.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("felix/client: handshake with %s: %w", addr, ctx.Err())
		}
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	c := newConn(nc, o, ids, ok)
	go c.readLoop(rest)
	if iv := c.pingInterval(ok); iv > 0 {
		go c.pingLoop(iv)
	}
	return c, nil
}

func checkHello(o *options) error {
	lim := wire.Limits{}
	if err := lim.CheckName([]byte(o.name)); err != nil {
		return localError(err)
	}
	if len(o.token) > 1<<16-1 {
		return localError(&wire.LimitError{Limit: wire.LimitTokenBytes, Max: 1<<16 - 1, Got: uint64(len(o.token))})
	}
	return nil
}

// dialNet connects (through the dialer if one is set), then starts TLS if
// the client speaks it.
func dialNet(ctx context.Context, addr string, o *options) (net.Conn, error) {
	nc, err := dialTransport(ctx, addr, o)
	if err != nil || o.tls == nil {
		return nc, err
	}
	return startTLS(ctx, nc, addr, o.tls)
}

func dialTransport(ctx context.Context, addr string, o *options) (net.Conn, error) {
	if o.dialer != nil {
		return o.dialer(ctx, addr)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return nc, nil
}

// handshake sends HELLO and reads HELLO_OK; rest is what the broker sent
// after it.
func handshake(nc net.Conn, o *options) (wire.HelloOK, []byte, error) {
	hello := wire.AppendHello(nil, 0, wire.Hello{
		VersionMin: wire.ProtocolVersionMin, VersionMax: wire.ProtocolVersion,
		Features: o.features, Token: o.token, ClientName: []byte(o.name),
	})
	if _, err := nc.Write(hello); err != nil {
		return wire.HelloOK{}, nil, err
	}
	var r wire.Reader
	buf := make([]byte, 0, 512)
	for {
		f, need, err := r.Next(buf)
		if err != nil {
			return wire.HelloOK{}, nil, fmt.Errorf("%w: %w", ErrProtocol, err)
		}
		if need == 0 {
			ok, err := helloAnswer(f)
			return ok, buf[f.Size():], err
		}
		buf = growFor(buf, need)
		n, err := nc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil && n == 0 {
			return wire.HelloOK{}, nil, fmt.Errorf("%w during the handshake: %w", ErrConnectionLost, err)
		}
	}
}

func helloAnswer(f wire.Frame) (wire.HelloOK, error) {
	switch f.Type {
	case wire.TypeHelloOK:
		var ok wire.HelloOK
		if err := ok.Decode(f, wire.Limits{}); err != nil {
			return ok, fmt.Errorf("%w: HELLO_OK: %w", ErrProtocol, err)
		}
		ok.BrokerID = append([]byte(nil), ok.BrokerID...)
		return ok, nil
	case wire.TypeError:
		var we wire.Error
		if err := we.Decode(f, wire.Limits{}); err != nil {
			return wire.HelloOK{}, fmt.Errorf("%w: ERROR: %w", ErrProtocol, err)
		}
		return wire.HelloOK{}, serverErrorFrom(&we)
	}
	return wire.HelloOK{}, fmt.Errorf("%w: %v in answer to HELLO", ErrProtocol, f.Type)
}

// growFor makes room for need more bytes after len(buf).
func growFor(buf []byte, need int) []byte {
	if cap(buf)-len(buf) >= need {
		return buf
	}
	nb := make([]byte, len(buf), max(2*cap(buf), len(buf)+need))
	copy(nb, buf)
	return nb
}
