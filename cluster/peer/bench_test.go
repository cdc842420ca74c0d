package peer

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// The benchmarks set the peer transport beside raw loopback TCP, in the
// same run: x-raw is the peer's time per request over raw TCP's (1.0 is
// raw TCP's speed; lower is better).

// rawEcho is a loopback TCP server that echoes frames of size bytes; it
// lives until the benchmark ends.
func rawEcho(b *testing.B, size int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	b.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				buf := make([]byte, size)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// rawRoundTrips times n round trips of size bytes over each of conns
// connections at once, one goroutine per connection: the time per round
// trip, all connections together.
func rawRoundTrips(b *testing.B, size, conns, n int) time.Duration {
	addr := rawEcho(b, size)
	ncs := make([]net.Conn, conns)
	for i := range ncs {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		ncs[i] = nc
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i, nc := range ncs {
		share := n / conns
		if i < n%conns {
			share++
		}
		wg.Go(func() {
			buf := make([]byte, size)
			for range share {
				if _, err := nc.Write(buf); err != nil {
					panic(err)
				}
				if _, err := io.ReadFull(nc, buf); err != nil {
					panic(err)
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start) / time.Duration(max(n, 1))
}

// benchPair is two brokers on loopback, b answering with an echo that
// allocates nothing.
func benchPair(b *testing.B) (*TCP, *TCP) {
	a, bb := pair2(b)
	bb.Handle(&echoer{})
	return a, bb
}

// pair2 is pair for benchmarks.
func pair2(tb testing.TB) (*TCP, *TCP) {
	var book sync.Map
	resolve := func(id string) (string, error) {
		v, _ := book.Load(id)
		s, _ := v.(string)
		return s, nil
	}
	a := listenTest(tb, Config{ID: "a", Resolve: resolve})
	bb := listenTest(tb, Config{ID: "b", Resolve: resolve})
	book.Store("a", a.Addr().String())
	book.Store("b", bb.Addr().String())
	return a, bb
}

func BenchmarkRoundTrip(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("value=%dB", size), func(b *testing.B) {
			req := pub(make([]byte, size))
			raw := rawRoundTrips(b, len(req), 1, b.N)
			a, _ := benchPair(b)
			ctx := context.Background()
			var dst []byte
			for range 100 {
				ans, _ := a.Call(ctx, "b", req, dst)
				dst = ans.Body
			}
			b.SetBytes(int64(2 * len(req)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ans, err := a.Call(ctx, "b", req, dst)
				if err != nil {
					b.Fatal(err)
				}
				dst = ans.Body
			}
			b.StopTimer()
			reportRaw(b, raw)
		})
	}
}

func reportRaw(b *testing.B, raw time.Duration) {
	peer := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(float64(raw.Nanoseconds()), "raw-ns/op")
	b.ReportMetric(peer/float64(raw.Nanoseconds()), "x-raw")
}

// BenchmarkPipelined: 16 goroutines each calling in a loop, all over the
// one link; raw TCP beside it gets a connection per goroutine.
func BenchmarkPipelined(b *testing.B) {
	const senders = 16
	for _, size := range []int{64, 1 << 10} {
		b.Run(fmt.Sprintf("senders=%d/value=%dB", senders, size), func(b *testing.B) {
			req := pub(make([]byte, size))
			raw := rawRoundTrips(b, len(req), senders, b.N)
			a, _ := benchPair(b)
			b.SetBytes(int64(2 * len(req)))
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for i := range senders {
				share := b.N / senders
				if i < b.N%senders {
					share++
				}
				wg.Go(func() {
					var dst []byte
					for range share {
						ans, err := a.Call(context.Background(), "b", req, dst)
						if err != nil {
							panic(err)
						}
						dst = ans.Body
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			reportRaw(b, raw)
			reportBatching(b, a)
		})
	}
}

// BenchmarkPipelinedSend: one goroutine keeping a window of requests in
// flight with Send and reused Call records.
func BenchmarkPipelinedSend(b *testing.B) {
	const window = 256
	req := pub(make([]byte, 1<<10))
	raw := rawRoundTrips(b, len(req), 16, b.N)
	a, _ := benchPair(b)
	free := make(chan *Call, window)
	for range window {
		free <- &Call{To: "b", Request: req, Done: func(c *Call, _ wire.Frame, err error) {
			if err != nil {
				panic(err)
			}
			free <- c
		}}
	}
	b.SetBytes(int64(2 * len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := a.Send(<-free); err != nil {
			b.Fatal(err)
		}
	}
	for range window {
		<-free
	}
	b.StopTimer()
	reportRaw(b, raw)
	reportBatching(b, a)
}

func reportBatching(b *testing.B, a *TCP) {
	if l := a.linkTo("b"); l != nil {
		writes, frames := l.stats()
		b.ReportMetric(float64(frames)/float64(max(writes, 1)), "requests/write")
	}
}

// BenchmarkRoundTripAnsweredLater: the handler answers from another
// goroutine, as a forwarded publish is (by the owner's log committer):
// the answer is written from that goroutine, straight to the socket.
func BenchmarkRoundTripAnsweredLater(b *testing.B) {
	req := pub(make([]byte, 1<<10))
	raw := rawRoundTrips(b, len(req), 1, b.N)
	a, bb := pair2(b)
	replies := make(chan Reply, 1024)
	var e echoer
	bb.Handle(HandlerFunc(func(_ string, f wire.Frame, r Reply) {
		e.mu.Lock()
		e.buf = wire.AppendFrame(e.buf[:0], f.Type, f.Flags, 0, f.Body)
		e.mu.Unlock()
		replies <- r
	}))
	var wg sync.WaitGroup
	b.Cleanup(func() { close(replies); wg.Wait() })
	wg.Go(func() {
		for r := range replies {
			e.mu.Lock()
			_ = r.Answer(e.buf)
			e.mu.Unlock()
		}
	})
	ctx := context.Background()
	var dst []byte
	b.SetBytes(int64(2 * len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ans, err := a.Call(ctx, "b", req, dst)
		if err != nil {
			b.Fatal(err)
		}
		dst = ans.Body
	}
	b.StopTimer()
	reportRaw(b, raw)
}
