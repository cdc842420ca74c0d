package netio

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

func TestHelloNegotiatesTheFeaturesBothSidesHave(t *testing.T) {
	b := startBroker(t, func(c *Config) { c.Limits.FrameBytesMax = 1 << 20 })
	ok := b.dial().hello(wire.FeaturesAll, nil)
	if ok.Version != 1 || ok.Features != serverFeatures || string(ok.BrokerID) != "b1" {
		t.Fatalf("HELLO_OK %+v", ok)
	}
	if ok.Limits.FrameBytesMax != 1<<20 || ok.IdleTimeoutMillis != uint32(DefaultIdleTimeout.Milliseconds()) {
		t.Fatalf("limits %+v idle %d", ok.Limits, ok.IdleTimeoutMillis)
	}
	if !ok.Features.Has(wire.FeaturePublishKeyed|wire.FeatureBinaryPublish|wire.FeatureDiscovery) || ok.Features.Has(wire.FeatureCache) {
		t.Fatalf("features %v", ok.Features)
	}
	narrow := b.dial().hello(wire.FeatureBinaryPublish|wire.FeatureCache, nil)
	if narrow.Features != wire.FeatureBinaryPublish {
		t.Fatalf("a client with binary publish and cache got %v", narrow.Features)
	}
}

func TestAFrameBeforeHelloIsRefusedAndTheConnectionClosed(t *testing.T) {
	b := startBroker(t)
	c := b.dial()
	c.send(wire.AppendPing(nil, 7, 1))
	c.expectError(wire.CodeHandshakeRequired, 7)
	c.expectClosed()
	if b.s.Metrics().HandshakesFailed.Load() != 1 {
		t.Fatalf("handshakes failed %d", b.s.Metrics().HandshakesFailed.Load())
	}
}

func TestAVersionTheBrokerDoesNotSpeakIsRefused(t *testing.T) {
	b := startBroker(t)
	c := b.dial()
	c.send(wire.AppendHello(nil, 3, wire.Hello{VersionMin: 2, VersionMax: 5}))
	c.expectError(wire.CodeUnsupportedVersion, 3)
	c.expectClosed()
}

func TestASecondHelloIsAnInvalidArgument(t *testing.T) {
	b := startBroker(t)
	c := b.client(wire.FeaturesAll)
	c.send(wire.AppendHello(nil, 9, wire.Hello{VersionMin: 1, VersionMax: 1}))
	c.expectError(wire.CodeInvalidArgument, 9)
	c.ping()
}

// tokenAuth accepts the token "good" and forbids everything on streams
// named "secret".
type tokenAuth struct{}

type namedPrincipal struct{}

var errNotYours = errors.New("not yours")

func (tokenAuth) Authenticate(token []byte) (Principal, error) {
	if !bytes.Equal(token, []byte("good")) {
		return nil, errors.New("bad token")
	}
	return namedPrincipal{}, nil
}

func (namedPrincipal) Allow(_ Action, r Resource) error {
	if r.Stream == "secret" {
		return errNotYours
	}
	return nil
}

func TestTheAuthenticatorIsAskedAtHelloAndEveryOperationIsChecked(t *testing.T) {
	var logged lockedBuffer
	b := startBroker(t, func(c *Config) {
		c.Authenticator = tokenAuth{}
		c.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	})
	bad := b.dial()
	bad.send(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Token: []byte("nope"), ClientName: []byte("intruder")}))
	bad.expectError(wire.CodeUnauthenticated, 1)
	bad.expectClosed()
	if n := b.s.cfg.Metrics.AuthRefused.Load(); n != 1 {
		t.Errorf("%d refused authentications counted, want 1", n)
	}
	if line := logged.String(); !strings.Contains(line, "authentication refused") || !strings.Contains(line, "client=intruder") ||
		!strings.Contains(line, "bad token") || !strings.Contains(line, "remote=127.0.0.1:") {
		t.Errorf("the refused HELLO was logged as %q", line)
	}

	secret := b.createStream("secret", 1)
	open := b.createStream("open", 1)
	c := b.dial()
	c.hello(wire.FeaturesAll, []byte("good"))
	c.send(wire.AppendPublish(nil, 10, secret, wire.AckPerBatch, wire.Record{Value: []byte("x")}))
	c.expectError(wire.CodeForbidden, 10)
	f := c.control(&wire.Subscribe{Stream: secret, Start: wire.Start{From: wire.StartLatest}})
	if e := decodeErr(f); e == nil || e.Code != wire.CodeForbidden {
		t.Fatalf("subscribe to secret: %v %v", f.Type, e)
	}
	for _, m := range []wire.Control{&wire.StreamCreate{Stream: secret}, &wire.StreamDelete{Stream: secret}, &wire.StreamDescribe{Stream: secret}} {
		if e := decodeErr(c.control(m)); e == nil || e.Code != wire.CodeForbidden {
			t.Fatalf("%v on secret: %v", m.FrameType(), e)
		}
	}
	c.send(wire.AppendPublish(nil, 11, open, wire.AckPerBatch, wire.Record{Value: []byte("x")}))
	ackOf(t, c.read())
}

// lockedBuffer is a bytes.Buffer a logger writes from the loops while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
