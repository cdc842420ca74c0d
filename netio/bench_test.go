package netio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// The publish benchmarks measure the server against a bare Go echo over
// loopback, measured in the same run: single-connection bandwidth for the
// pipelined publishes, the round trip of one 1 KiB message for the
// publish-to-ack latency. The ratios are what to read: x-raw is the
// publish bandwidth over the raw bandwidth (goal >= 0.5), x-raw-rtt the
// publish-to-ack p50 over the raw round trip's p50 (goal <= 3).
//
//	go test -run '^$' -bench BenchmarkPublishLoopback -benchtime 200000x ./netio/

const (
	benchRecordBytes = 1024
	rawBytes         = 128 << 20 // bytes the raw bandwidth baseline moves
	rawChunkBytes    = 64 << 10
	latencySamples   = 5000
)

// rawBaseline is what a bare echo over one loopback connection does.
type rawBaseline struct {
	bytesPerSec float64
	rttP50      time.Duration
}

// measureRaw runs the echo baseline. Each benchmark measures it right
// before its own timed part, so both see the same machine (other work on
// a shared machine moves loopback bandwidth a lot).
func measureRaw(b *testing.B, bandwidth, rtt bool) rawBaseline {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	var out rawBaseline
	if bandwidth {
		out.bytesPerSec = rawBandwidth(b, ln.Addr().String())
	}
	if rtt {
		out.rttP50 = rawRTT(b, ln.Addr().String())
	}
	return out
}

// rawBandwidth streams rawBytes through the echo, writing and reading at
// once, and counts them one way.
func rawBandwidth(b *testing.B, addr string) float64 {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	chunk := make([]byte, rawChunkBytes)
	start := time.Now()
	go func() {
		for sent := 0; sent < rawBytes; sent += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	back := make([]byte, rawChunkBytes)
	for got := 0; got < rawBytes; {
		n, err := c.Read(back)
		if err != nil {
			b.Fatal(err)
		}
		got += n
	}
	return rawBytes / time.Since(start).Seconds()
}

// rawRTT is the p50 of writing one record-sized message and reading it back.
func rawRTT(b *testing.B, addr string) time.Duration {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg := make([]byte, benchRecordBytes)
	samples := make([]time.Duration, latencySamples)
	for i := range samples {
		t0 := time.Now()
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, msg); err != nil {
			b.Fatal(err)
		}
		samples[i] = time.Since(t0)
	}
	return p50(samples)
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// benchStore is where the benchmark broker keeps its stream.
type benchStore int

const (
	storeMemory   benchStore = iota // the network path alone: acknowledged inside Stream.Publish, on the loop
	storeLog                        // a durable log under Periodic fsync: acknowledged by the committer once written
	storeLogFsync                   // a durable log under OnCommit: acknowledged by the committer once fdatasynced
)

func (s benchStore) String() string {
	return [...]string{"memory", "log", "log-oncommit"}[s]
}

// benchBroker starts a broker with a stream of one shard kept in store; a
// durable log lives in b.TempDir() (OnCommit: with prepared segments, as
// felix serve runs it).
func benchBroker(b *testing.B, store benchStore) (*Server, wire.StreamRef) {
	opts := engine.Options{MemoryShardBytes: 64 << 20}
	durable := store != storeMemory
	if durable {
		d, err := ring.Open(ring.Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { d.Close() })
		opts.FS, opts.Dir, opts.Fsync = vfs.NewOS(d), b.TempDir(), shardlog.Periodic(time.Second)
		if store == storeLogFsync {
			opts.Fsync, opts.PrepareSegments = shardlog.OnCommit(), true
		}
	}
	e, err := engine.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	id := engine.StreamID{Tenant: "bench", Namespace: "net", Name: "loopback"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 1, Durable: durable}); err != nil {
		b.Fatal(err)
	}
	s, err := NewServer(Config{Addr: "127.0.0.1:0", Engine: e, Multicore: true, EventLoops: benchLoops()})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.Stop(b.Context())
		e.Close()
	})
	return s, wireRef(id)
}

// benchConn is a lean publishing client: pre-encoded frames, and acks read
// into one reused buffer.
type benchConn struct {
	nc  net.Conn
	r   *bufio.Reader
	hdr [wire.HeaderSize]byte
	buf []byte
}

func dialBench(b *testing.B, s *Server) *benchConn {
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	c := &benchConn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10)}
	if _, err := nc.Write(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})); err != nil {
		b.Fatal(err)
	}
	if t, err := c.readFrame(); err != nil || t != wire.TypeHelloOK {
		b.Fatalf("hello: %v %v", t, err)
	}
	return c
}

// readFrame reads one frame and returns its type; the body stays in c.buf.
func (c *benchConn) readFrame() (wire.Type, error) {
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return 0, err
	}
	n := int(binary.LittleEndian.Uint32(c.hdr[:])) + 4 - wire.HeaderSize
	c.buf = slices.Grow(c.buf[:0], n)[:n]
	if _, err := io.ReadFull(c.r, c.buf); err != nil {
		return 0, err
	}
	t := wire.Type(binary.LittleEndian.Uint16(c.hdr[4:]))
	if t == wire.TypeError {
		var e wire.Error
		_ = e.Decode(wire.Frame{Type: t, Body: c.buf}, wire.Limits{})
		return t, &e
	}
	return t, nil
}

// publishFrame is a publish of batch records of benchRecordBytes each, with
// its request id at byte 8, to be patched per send.
func publishFrame(ref wire.StreamRef, batch int) []byte {
	recs := make([]wire.Record, batch)
	for i := range recs {
		recs[i] = wire.Record{Value: make([]byte, benchRecordBytes)}
	}
	if batch == 1 {
		return wire.AppendPublish(nil, 1, ref, wire.AckPerBatch, recs[0])
	}
	return wire.AppendPublishBatch(nil, 1, ref, wire.AckPerBatch, recs)
}

func BenchmarkPublishLoopback(b *testing.B) {
	for _, store := range []benchStore{storeMemory, storeLog, storeLogFsync} {
		b.Run(store.String()+"/batch64", func(b *testing.B) { benchPipelined(b, store, 64, 16) })
		b.Run(store.String()+"/single", func(b *testing.B) { benchPipelined(b, store, 1, 256) })
		b.Run(store.String()+"/single-latency", func(b *testing.B) { benchLatency(b, store) })
	}
}

// benchPipelined publishes b.N records in frames of batch records, with up
// to window frames awaiting their ack.
func benchPipelined(b *testing.B, store benchStore, batch, window int) {
	raw := measureRaw(b, true, false)
	s, ref := benchBroker(b, store)
	c := dialBench(b, s)
	frame := publishFrame(ref, batch)
	frames := (b.N + batch - 1) / batch
	slots := make(chan struct{}, window)
	acked := awaitAcks(c, frames, slots)
	b.SetBytes(benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	// Like a client with a write buffer: every frame a free slot allows
	// goes out in one write, up to about 64 KiB.
	out := make([]byte, 0, max(64<<10, len(frame)))
	for i := 0; i < frames; {
		slots <- struct{}{}
		out, i = appendFrame(out[:0], frame, i), i+1
		for i < frames && len(out)+len(frame) <= cap(out) && takeSlot(slots) {
			out, i = appendFrame(out, frame, i), i+1
		}
		if _, err := c.nc.Write(out); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-acked; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	mbps := float64(frames*batch*benchRecordBytes) / b.Elapsed().Seconds()
	b.ReportMetric(raw.bytesPerSec/1e6, "raw-MB/s")
	b.ReportMetric(mbps/raw.bytesPerSec, "x-raw")
}

// awaitAcks reads n PUBLISH_ACKs on c, freeing a slot for each, and then
// sends nil on the channel it returns, or the first error.
func awaitAcks(c *benchConn, n int, slots chan struct{}) <-chan error {
	acked := make(chan error, 1)
	go func() {
		for range n {
			t, err := c.readFrame()
			if err == nil && t != wire.TypePublishAck {
				err = errors.New("unexpected " + t.String())
			}
			if err != nil {
				acked <- err
				return
			}
			<-slots
		}
		acked <- nil
	}()
	return acked
}

// appendFrame appends frame as request i+1.
func appendFrame(out, frame []byte, i int) []byte {
	at := len(out)
	out = append(out, frame...)
	binary.LittleEndian.PutUint64(out[at+8:], uint64(i+1))
	return out
}

func takeSlot(slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// benchLatency publishes one record at a time and waits for its ack.
func benchLatency(b *testing.B, store benchStore) {
	raw := measureRaw(b, false, true)
	s, ref := benchBroker(b, store)
	c := dialBench(b, s)
	frame := publishFrame(ref, 1)
	samples := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		binary.LittleEndian.PutUint64(frame[8:], uint64(i+1))
		t0 := time.Now()
		if _, err := c.nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		if t, err := c.readFrame(); err != nil || t != wire.TypePublishAck {
			b.Fatalf("ack: %v %v", t, err)
		}
		samples = append(samples, time.Since(t0))
	}
	b.StopTimer()
	p := p50(samples)
	b.ReportMetric(float64(p.Microseconds()), "p50-µs")
	b.ReportMetric(float64(raw.rttP50.Microseconds()), "raw-p50-µs")
	b.ReportMetric(float64(p)/float64(raw.rttP50), "x-raw-rtt")
}

// benchLoops is FELIX_BENCH_EVENT_LOOPS, or 0 (the server's default).
func benchLoops() int {
	n, _ := strconv.Atoi(os.Getenv("FELIX_BENCH_EVENT_LOOPS"))
	return n
}
