package client

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// fakeMember is a fake broker of a fake cluster: it answers BROKER_LIST
// with what list returns, counts the publishes it sees, and answers them
// with publish (acking them when nil).
type fakeMember struct {
	*fakeBroker
	publishes atomic.Int64
	mu        sync.Mutex
	list      []wire.BrokerInfo
	publish   func(fc *fakeConn, f wire.Frame)
}

func newFakeMember(t *testing.T) *fakeMember {
	m := &fakeMember{}
	var seq sequencer
	m.fakeBroker = newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		switch f.Type {
		case wire.TypeBrokerList:
			m.mu.Lock()
			res := &wire.BrokerListResult{Brokers: append([]wire.BrokerInfo{}, m.list...)}
			m.mu.Unlock()
			fc.sendWith(func(dst []byte) []byte { return wire.AppendControl(dst, f.RequestID, res) })
		case wire.TypePublish, wire.TypePublishBatch, wire.TypePublishJSON:
			m.publishes.Add(1)
			m.mu.Lock()
			h := m.publish
			m.mu.Unlock()
			if h != nil {
				h(fc, f)
				return
			}
			fc.ack(f.RequestID, wire.AckRun{FirstOffset: seq.take(0, 1), Count: 1})
		default: // a describe: not this fake's to answer, so the client routes by the broker in use
			fc.fail(f.RequestID, wire.CodeForbidden, "describe refused", wire.Details{})
		}
	})
	return m
}

// lists makes BROKER_LIST answer these brokers.
func (m *fakeMember) lists(bs ...*fakeMember) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.list = nil
	for i, b := range bs {
		m.list = append(m.list, wire.BrokerInfo{ID: string(rune('a' + i)), Addr: b.addr()})
	}
}

func (m *fakeMember) answer(h func(fc *fakeConn, f wire.Frame)) {
	m.mu.Lock()
	m.publish = h
	m.mu.Unlock()
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func dialFakeCluster(t *testing.T, seeds []string, opts ...Option) *ClusterClient {
	t.Helper()
	c, err := DialCluster(testCtx(t), seeds, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// fakeClock is a clock the test moves: Sleep advances it at once, and
// records each wait.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	f.advance(d)
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

func (f *fakeClock) waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

func withClock(c clock) Option { return func(o *options) { o.clock = c } }

func withRandN(randN func(int64) int64) Option { return func(o *options) { o.randN = randN } }
