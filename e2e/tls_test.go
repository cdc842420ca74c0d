package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment/vfs"
)

// startTLSBroker is a broker with auth off and a TLS listener beside the
// plain one; the pool trusts its certificate.
func startTLSBroker(t testing.TB) (*broker, *x509.CertPool) {
	t.Helper()
	cert, pool := selfSigned(t)
	b := startBrokerWith(t, vfs.NewMem(), "/data", func(cfg *netio.Config) {
		cfg.TLSAddr = "127.0.0.1:0"
		cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	})
	return b, pool
}

func dialTLS(t testing.TB, b *broker, pool *x509.CertPool, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Dial(testCtx(t), b.srv.TLSAddr().String(), append(opts, client.WithTLS(&tls.Config{RootCAs: pool}))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Publish and subscribe round-trip over TLS into the same engine the
// plain listener serves: records published over either are read over the
// other, in order, keyed records on their shards.
func TestTLSRoundTripWithPublishAndSubscribe(t *testing.T) {
	b, pool := startTLSBroker(t)
	secure := dialTLS(t, b, pool)
	plain := b.dial(t)
	s := createStream(t, secure, client.StreamConfig{Shards: 2})
	recs := make([]client.Record, 100)
	for i := range recs {
		recs[i] = client.Record{Key: fmt.Appendf(nil, "k%d", i%7), Value: fmt.Appendf(nil, "tls-%d", i)}
	}
	if _, err := secure.PublishBatch(testCtx(t), s, recs); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Publish(testCtx(t), s, []byte("plain"), client.WithKey([]byte("k0"))); err != nil {
		t.Fatal(err)
	}
	got := 0
	for shard := range 2 {
		sub, err := secure.Subscribe(testCtx(t), s, shard, client.SubscribeOptions{Start: client.FromEarliest()})
		if err != nil {
			t.Fatal(err)
		}
		info, err := plain.DescribeStream(testCtx(t), s)
		if err != nil {
			t.Fatal(err)
		}
		for want := int64(0); want < info.Shards[shard].NextOffset; want++ {
			ev, err := sub.Next(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if ev.Offset != want {
				t.Fatalf("shard %d: offset %d, want %d", shard, ev.Offset, want)
			}
			got++
		}
		sub.Close()
	}
	if got != len(recs)+1 {
		t.Fatalf("read %d records over TLS, want %d", got, len(recs)+1)
	}
}

// A client that does not trust the broker's certificate does not connect.
func TestATLSClientRefusesAnUntrustedCertificate(t *testing.T) {
	b, _ := startTLSBroker(t)
	_, err := client.Dial(testCtx(t), b.srv.TLSAddr().String(), client.WithTLS(&tls.Config{RootCAs: x509.NewCertPool()}))
	var unknown x509.UnknownAuthorityError
	if err == nil || !errors.As(err, &unknown) {
		t.Fatalf("dialing with no trusted roots: %v", err)
	}
}
