package netio

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// helloOutcome dials addr, says HELLO and reads: true when the connection
// was answered or ended (closed, reset, refused), false when it stayed
// open and silent past silentMax: a connection nobody serves or closes.
func helloOutcome(addr string, silentMax time.Duration) bool {
	nc, err := net.DialTimeout("tcp", addr, silentMax)
	if err != nil {
		return true
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(silentMax))
	if _, err := nc.Write(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1})); err != nil {
		return !errors.Is(err, os.ErrDeadlineExceeded)
	}
	var b [64]byte
	_, err = nc.Read(b[:])
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// A client that dials while the server stops is answered, closed or
// refused, never left connected to nobody. gnet's shutdown could accept a
// connection and hand it to an event loop that had already exited; the
// client then waited out its whole handshake timeout (the cause of the
// flaky e2e restart test). Before the fix about three connections a round
// were left silent here.
func TestAConnectionDialledWhileTheServerStopsIsNeverLeftSilent(t *testing.T) {
	const rounds, dialers = 20, 4
	const silentMax = 5 * time.Second
	var silent atomic.Int32
	for range rounds {
		e, err := engine.Open(engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewServer(Config{Addr: "127.0.0.1:0", Engine: e, Multicore: true, EventLoops: 2, BrokerID: "b1"})
		if err == nil {
			err = s.Start()
		}
		if err != nil {
			t.Fatal(err)
		}
		addr := s.Addr().String()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range dialers {
			wg.Go(func() {
				for {
					if !helloOutcome(addr, silentMax) {
						silent.Add(1)
					}
					select {
					case <-stop:
						return
					default:
					}
				}
			})
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		close(stop)
		wg.Wait()
		e.Close()
	}
	if n := silent.Load(); n > 0 {
		t.Fatalf("%d connections dialled around a stop were left open and unanswered", n)
	}
}
