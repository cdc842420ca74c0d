package e2e

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// The benchmarks publish through the client to a broker in this process
// over loopback, into a stream that is not durable (a bounded in-memory
// log: what is measured is the client, the protocol and the server, not a
// disk), and measure a bare TCP exchange of the same bytes in the same run
// as the baseline. Each reports its figures beside the baseline's and the
// ratio between them.

const (
	recordBytes    = 1 << 10
	batchRecords   = 64
	windowBatches  = 16 // batches in flight at once
	tcpAnswerBytes = 16 // what the baseline's server answers per batch: an ack's size
)

// BenchmarkPublishBatchThroughput1KiB publishes batches of 64 records of 1
// KiB, keeping 16 batches in flight, and compares the record rate with a
// bare TCP connection carrying the same bytes per batch to a Go server that
// reads them and answers 16 bytes, with the same window.
func BenchmarkPublishBatchThroughput1KiB(b *testing.B) {
	br := newBroker(b)
	c := br.dial(b, client.WithPingInterval(0))
	ctx := testCtx(b)
	s := createStream(b, c, client.StreamConfig{Shards: 1, InMemory: true})
	recs := make([]client.Record, batchRecords)
	for i := range recs {
		recs[i] = client.Record{Value: make([]byte, recordBytes)}
	}
	b.SetBytes(batchRecords * recordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	window := make([]*client.PublishFuture, 0, windowBatches)
	for range b.N {
		if len(window) == windowBatches {
			if _, err := window[0].Wait(ctx); err != nil {
				b.Fatal(err)
			}
			window = window[1:]
		}
		window = append(window, c.PublishBatchAsync(ctx, s, recs))
	}
	for _, f := range window {
		if _, err := f.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	felix := time.Since(start)
	b.StopTimer()
	frameBytes := batchRecords*(recordBytes+3) + 64 // a PUBLISH_BATCH's size, near enough
	raw := tcpThroughput(b, b.N, frameBytes)
	perSec := func(d time.Duration) float64 { return float64(b.N*batchRecords) / d.Seconds() }
	b.ReportMetric(perSec(felix), "records/s")
	b.ReportMetric(perSec(raw), "tcp-records/s")
	b.ReportMetric(perSec(felix)/perSec(raw), "x-tcp-rate")
}

// BenchmarkPublishAckLatency1KiB publishes one 1 KiB record at a time and
// waits for each acknowledgement, against a bare TCP echo of 1 KiB over
// loopback, in the same run.
func BenchmarkPublishAckLatency1KiB(b *testing.B) {
	br := newBroker(b)
	c := br.dial(b, client.WithPingInterval(0))
	ctx := testCtx(b)
	s := createStream(b, c, client.StreamConfig{Shards: 1, InMemory: true})
	value := make([]byte, recordBytes)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := c.Publish(ctx, s, value); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	raw := tcpEchoLatency(b, b.N, recordBytes)
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	r50, r99 := percentile(raw, 50), percentile(raw, 99)
	b.ReportMetric(us(p50), "p50-us")
	b.ReportMetric(us(p99), "p99-us")
	b.ReportMetric(us(r50), "tcp-p50-us")
	b.ReportMetric(us(r99), "tcp-p99-us")
	b.ReportMetric(us(p50)/us(r50), "x-tcp-p50")
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// tcpThroughput sends n messages of size bytes over loopback, windowBatches
// at a time, to a server that reads each whole and answers tcpAnswerBytes,
// and returns the time from the first send to the last answer.
func tcpThroughput(tb testing.TB, n, size int) time.Duration {
	conn := loopbackPair(tb, func(nc net.Conn) {
		msg := make([]byte, size)
		ack := make([]byte, tcpAnswerBytes)
		for {
			if _, err := io.ReadFull(nc, msg); err != nil {
				return
			}
			if _, err := nc.Write(ack); err != nil {
				return
			}
		}
	})
	msg := make([]byte, size)
	ack := make([]byte, tcpAnswerBytes)
	done := make(chan error, 1)
	window := make(chan struct{}, windowBatches)
	start := time.Now()
	go func() {
		for range n {
			if _, err := io.ReadFull(conn, ack); err != nil {
				done <- err
				return
			}
			<-window
		}
		done <- nil
	}()
	for i := range n {
		window <- struct{}{}
		binary.LittleEndian.PutUint64(msg, uint64(i))
		if _, err := conn.Write(msg); err != nil {
			tb.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}

// tcpEchoLatency times n round trips of size bytes through a bare Go echo
// server over loopback.
func tcpEchoLatency(tb testing.TB, n, size int) []time.Duration {
	conn := loopbackPair(tb, func(nc net.Conn) { _, _ = io.Copy(nc, nc) })
	msg := make([]byte, size)
	back := make([]byte, size)
	lat := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := conn.Write(msg); err != nil {
			tb.Fatal(err)
		}
		if _, err := io.ReadFull(conn, back); err != nil {
			tb.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	return lat
}

// loopbackPair starts a one-connection TCP server running serve and
// returns the client's end.
func loopbackPair(tb testing.TB, serve func(net.Conn)) net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		serve(nc)
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}
