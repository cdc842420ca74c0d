package netio

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// selfSigned makes a certificate for 127.0.0.1 and the pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "felix test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// startTLSBroker starts a broker with a TLS listener beside the plain one;
// the pool trusts its certificate.
func startTLSBroker(t *testing.T, mutate ...func(*Config)) (*testBroker, *x509.CertPool) {
	t.Helper()
	cert, pool := selfSigned(t)
	withTLS := func(c *Config) {
		c.TLSAddr = "127.0.0.1:0"
		c.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	}
	return startBroker(t, append([]func(*Config){withTLS}, mutate...)...), pool
}

// dialTLS connects a raw client over TLS.
func (b *testBroker) dialTLS(pool *x509.CertPool) *rawClient {
	b.t.Helper()
	d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", b.s.TLSAddr().String())
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { nc.Close() })
	return &rawClient{t: b.t, nc: nc}
}

// The TLS listener speaks the same protocol into the same engine: HELLO,
// publishes (one far larger than the connection's first read buffer),
// a subscription that joins history and live, UNSUBSCRIBE's OK after the
// last event, and records published over plain TCP seen over TLS.
func TestTLSConnectionsSpeakTheSameProtocol(t *testing.T) {
	b, pool := startTLSBroker(t)
	ref := b.createStream("orders", 1)
	pub := b.dialTLS(pool)
	pub.hello(wire.FeaturesAll, nil)
	big := make([]byte, 3*tlsInboundBytes+17)
	big[len(big)-1] = 'z'
	pub.send(wire.AppendPublishBatch(nil, 1, ref, wire.AckPerBatch, []wire.Record{{Value: []byte("a")}, {Value: big}}))
	if runs := ackOf(t, pub.read()); total(runs) != 2 {
		t.Fatalf("acks %+v", runs)
	}
	sub := b.dialTLS(pool)
	sub.hello(wire.FeaturesAll, nil)
	subd := sub.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartEarliest}})
	plain := b.client(wire.FeaturesAll)
	plain.send(wire.AppendPublish(nil, 1, ref, wire.AckPerBatch, wire.Record{Value: []byte("over tcp")}))
	ackOf(t, plain.read())
	ev := sub.events(3)
	if string(ev[0].Value) != "a" || len(ev[1].Value) != len(big) || ev[1].Value[len(big)-1] != 'z' || string(ev[2].Value) != "over tcp" {
		t.Fatalf("events %q %d %q", ev[0].Value, len(ev[1].Value), ev[2].Value)
	}
	sub.send(wire.AppendControl(nil, 99, &wire.Unsubscribe{SubscriptionID: subd.SubscriptionID}))
	if f := sub.read(); f.Type != wire.TypeOK || f.RequestID != 99 {
		t.Fatalf("unsubscribe answered %v %d", f.Type, f.RequestID)
	}
	if n := len(b.s.Connections()); n != 3 {
		t.Fatalf("%d connections listed, want 3", n)
	}
}

// A frame that breaks the framing over TLS is refused and the connection
// closed, as over TCP; the broker goes on serving the others.
func TestATLSConnectionThatBreaksTheFramingIsClosed(t *testing.T) {
	b, pool := startTLSBroker(t)
	bad := b.dialTLS(pool)
	bad.hello(wire.FeaturesAll, nil)
	frame := wire.AppendPing(nil, 7, 1)
	frame[4], frame[5] = 0xee, 0xee // an unknown frame type
	bad.send(frame)
	bad.expectError(wire.CodeUnknownFrameType, 7)
	bad.expectClosed()
	good := b.dialTLS(pool)
	good.hello(wire.FeaturesAll, nil)
	good.ping()
	waitUntil(t, "the refused connection to be closed", func() bool { return b.s.Metrics().ConnectionsActive.Load() == 1 })
}

// The timers apply to TLS connections: one that never says HELLO is
// closed with handshake_timeout.
func TestATLSConnectionThatNeverSaysHelloTimesOut(t *testing.T) {
	clk := newFakeClock()
	b, pool := startTLSBroker(t, func(c *Config) { c.Now = clk.Now })
	silent := b.dialTLS(pool)
	silent.nc.(*tls.Conn).Handshake()
	waitUntil(t, "the TLS connection to open", func() bool { return b.s.Metrics().ConnectionsActive.Load() == 1 })
	b.s.sweep(clk.advance(DefaultHandshakeTimeout))
	silent.expectError(wire.CodeHandshakeTimeout, 0)
	silent.expectClosed()
}

// A TLS subscriber that stops reading holds the broker to its outbound
// budget, as over TCP: every publish is answered meanwhile, the
// subscription drops, and what the connection holds for its socket stays
// within the budget; reading again, the subscriber sees the drops as a gap.
func TestATLSSubscriberThatStopsReadingIsBoundedByItsBudget(t *testing.T) {
	const budget = 64 << 10
	b, pool := startTLSBroker(t, func(c *Config) {
		c.OutboundBytesMax = budget
		c.sendBufferBytes = 8 << 10
	})
	ref := b.createStream("slow", 1)
	raw, err := net.DialTimeout("tcp", b.s.TLSAddr().String(), waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	raw.(*net.TCPConn).SetReadBuffer(4 << 10)
	nc := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	t.Cleanup(func() { nc.Close() })
	sub := &rawClient{t: t, nc: nc}
	sub.hello(wire.FeaturesAll, nil)
	subd := sub.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartLatest}, QueueCapacity: 64})
	const n = 4000
	pub := b.client(wire.FeaturesAll)
	var frames []byte
	for i := 0; i < n; i += 50 {
		recs := make([]wire.Record, 50)
		for j := range recs {
			recs[j] = wire.Record{Value: append(value(i+j), make([]byte, 1024)...)}
		}
		frames = wire.AppendPublishBatch(frames, uint64(i+1), ref, wire.AckPerBatch, recs)
	}
	pub.send(frames)
	for range n / 50 {
		ackOf(t, pub.read())
	}
	var peak int64
	for _, ci := range b.s.Connections() {
		peak = max(peak, ci.OutboundPeak)
	}
	if peak > budget+8<<10 {
		t.Fatalf("a connection held %d bytes for its socket, budget %d", peak, budget)
	}
	dropped := subscriptionOf(t, b, subd.SubscriptionID).sub.Stats().Dropped // final: nothing is published any more
	if dropped == 0 {
		t.Fatal("nothing dropped")
	}
	evs := sub.events(int(n - dropped))
	pub.send(wire.AppendPublish(nil, 99999, ref, wire.AckPerBatch, wire.Record{Value: []byte("after")}))
	ackOf(t, pub.read())
	evs = append(evs, sub.events(1)...)
	if last := evs[len(evs)-1]; last.Offset != n || string(last.Value) != "after" {
		t.Fatalf("the record after the drops came at offset %d", last.Offset)
	}
}

// subscriptionOf finds a subscription's deliverer by its id.
func subscriptionOf(t *testing.T, b *testBroker, id uint64) *deliverer {
	t.Helper()
	for _, c := range b.s.connections() {
		c.subMu.Lock()
		d := c.subs[id]
		c.subMu.Unlock()
		if d != nil {
			return d
		}
	}
	t.Fatalf("no subscription %d", id)
	return nil
}

// Stop ends TLS subscriptions with shutting_down, closes TLS connections
// and returns.
func TestStopClosesTLSConnections(t *testing.T) {
	b, pool := startTLSBroker(t)
	ref := b.createStream("orders", 1)
	sub := b.dialTLS(pool)
	sub.hello(wire.FeaturesAll, nil)
	sub.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartLatest}})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := b.s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	f := sub.read()
	ended := decodeControl[wire.SubscriptionEnded](t, f)
	if ended.Code != wire.CodeShuttingDown {
		t.Fatalf("ended with %v", ended.Code)
	}
	sub.expectClosed()
	if _, err := net.DialTimeout("tcp", b.s.TLSAddr().String(), time.Second); err == nil {
		t.Fatal("the TLS listener still accepts after Stop")
	}
}

// A TLS address without a certificate is a configuration error.
func TestATLSAddressNeedsACertificate(t *testing.T) {
	_, err := NewServer(Config{Engine: startBroker(t).e, TLSAddr: "127.0.0.1:0"})
	if !errors.Is(err, ErrTLSConfig) {
		t.Fatalf("got %v", err)
	}
}

// A TLS address that cannot be bound fails Start, and takes the plain
// listener down with it.
func TestATLSListenerThatCannotBindFailsStart(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cert, _ := selfSigned(t)
	e := startBroker(t).e
	s, err := NewServer(Config{Addr: "127.0.0.1:0", Engine: e, TLSAddr: taken.Addr().String(),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("Start succeeded on a taken TLS address")
	}
	if _, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		t.Fatal("the plain listener still accepts after the failed Start")
	}
}
