package e2e

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	fbroker "github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// broker is one broker.Broker on 127.0.0.1:0, in-process, started the way
// felix serve starts one.
type broker struct {
	t    testing.TB
	fs   vfs.FS
	dir  string
	tune func(*netio.Config)
	b    *fbroker.Broker
	eng  *engine.Engine // b's, for tests that look inside
	srv  *netio.Server  // b's
	done bool           // stopped
}

// startBroker starts a broker on fs/dir (a MemFS keeps its files across a
// restart); it stops when the test ends.
func startBroker(t testing.TB, fs vfs.FS, dir string) *broker {
	return startBrokerWith(t, fs, dir, nil)
}

// startBrokerWith is startBroker with the server's configuration adjusted
// by tune.
func startBrokerWith(t testing.TB, fs vfs.FS, dir string, tune func(*netio.Config)) *broker {
	t.Helper()
	cfg := fbroker.Config{DataDir: dir, FS: fs, Net: netio.Config{Addr: "127.0.0.1:0"}}
	if tune != nil { // once the engine is open: quotas count its bytes
		cfg.Secure = func(nc *netio.Config, _ *engine.Engine) error { tune(nc); return nil }
	}
	fb, err := fbroker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := &broker{t: t, fs: fs, dir: dir, tune: tune, b: fb, eng: fb.Engine(), srv: fb.Server()}
	t.Cleanup(b.stop)
	return b
}

func newBroker(t testing.TB) *broker { return startBroker(t, vfs.NewMem(), "/data") }

func (b *broker) addr() string { return b.srv.Addr().String() }

func (b *broker) metrics() *netio.Metrics { return b.srv.Metrics() }

// stop stops the broker. Stopping twice is harmless.
func (b *broker) stop() {
	if b.done {
		return
	}
	b.done = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.b.Stop(ctx); err != nil {
		b.t.Errorf("stopping the broker: %v", err)
	}
}

// stopAfterCrash stops a broker whose files crashed under it: the server
// and engine fail to sync, and that is expected.
func (b *broker) stopAfterCrash() {
	b.done = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = b.b.Stop(ctx)
}

// restart stops the broker and starts a new one on the same files.
func (b *broker) restart() *broker {
	b.stop()
	return startBrokerWith(b.t, b.fs, b.dir, b.tune)
}

func (b *broker) dial(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Dial(testCtx(t), b.addr(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testCtx bounds a test's waits: a hang fails the test, not the run.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// createStream creates a stream named after the test.
func createStream(t testing.TB, c *client.Client, cfg client.StreamConfig) client.Stream {
	t.Helper()
	s := client.Stream{Tenant: "acme", Namespace: "e2e", Name: "s" + sanitize(t.Name())}
	if _, err := c.CreateStream(testCtx(t), s, cfg); err != nil {
		t.Fatal(err)
	}
	return s
}

// sanitize keeps the characters a stream name may hold.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// recordingConn keeps a copy of every byte the client writes, so a test
// can read the frames it sent.
type recordingConn struct {
	net.Conn
	mu  sync.Mutex
	out []byte
}

func (r *recordingConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.out = append(r.out, p...)
	r.mu.Unlock()
	return r.Conn.Write(p)
}

// frames parses what was written so far.
func (r *recordingConn) frames(t testing.TB) []wire.Frame {
	t.Helper()
	r.mu.Lock()
	buf := append([]byte(nil), r.out...)
	r.mu.Unlock()
	var out []wire.Frame
	var rd wire.Reader
	for len(buf) > 0 {
		f, need, err := rd.Next(buf)
		if err != nil || need > 0 {
			t.Fatalf("the client wrote a broken frame stream: need %d, %v", need, err)
		}
		out = append(out, f)
		buf = buf[f.Size():]
	}
	return out
}

// recorder keeps the recordingConns of every connection a client dials
// (its own, and one per subscription).
type recorder struct {
	mu    sync.Mutex
	conns []*recordingConn
}

// frames is every frame the client wrote, connection by connection.
func (r *recorder) frames(t testing.TB) []wire.Frame {
	r.mu.Lock()
	conns := append([]*recordingConn(nil), r.conns...)
	r.mu.Unlock()
	var out []wire.Frame
	for _, c := range conns {
		out = append(out, c.frames(t)...)
	}
	return out
}

// recordingDialer dials TCP and records what the client writes.
func recordingDialer() (client.Option, *recorder) {
	rec := &recorder{}
	return client.WithDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		rc := &recordingConn{Conn: nc}
		rec.mu.Lock()
		rec.conns = append(rec.conns, rc)
		rec.mu.Unlock()
		return rc, nil
	}), rec
}
