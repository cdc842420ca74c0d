package e2e

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// The TLS benchmarks measure what the TLS listener costs against the plain
// one, in the same run, on the same broker and stream: the same batches
// (64 records of 1 KiB, 16 in flight) and the same single-record
// publish-and-wait, alternating between the two listeners in short turns
// so that drift on a shared machine falls on both alike. Beside them, a
// bare exchange of the same bytes over TLS and over TCP (no broker) says
// how much of the difference is TLS itself. TLS 1.3 with the Go defaults
// (AES-128-GCM on a CPU with AES instructions), a P-256 certificate.

// turnBatches is how many batches one listener publishes before the other
// takes its turn.
const turnBatches = 32

// BenchmarkTLSPublishBatchThroughput1KiB reports the record rate over TLS
// and over plain TCP and their ratio, and the same ratio for a bare
// exchange of the bytes.
func BenchmarkTLSPublishBatchThroughput1KiB(b *testing.B) {
	br, pool := startTLSBroker(b)
	plain := br.dial(b, client.WithPingInterval(0))
	secure := dialTLS(b, br, pool, client.WithPingInterval(0))
	s := createStream(b, plain, client.StreamConfig{Shards: 1, InMemory: true})
	recs := make([]client.Record, batchRecords)
	for i := range recs {
		recs[i] = client.Record{Value: make([]byte, recordBytes)}
	}
	b.SetBytes(2 * batchRecords * recordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	var tlsTook, plainTook time.Duration
	for done := 0; done < b.N; done += turnBatches {
		n := min(turnBatches, b.N-done)
		tlsTook += publishWindowed(b, secure, s, recs, n)
		plainTook += publishWindowed(b, plain, s, recs, n)
	}
	b.StopTimer()
	bareTCP := bareThroughput(b, plainPair(b), b.N, pairMessageBytes)
	bareTLS := bareThroughput(b, tlsPair(b), b.N, pairMessageBytes)
	perSec := func(d time.Duration) float64 { return float64(b.N*batchRecords) / d.Seconds() }
	b.ReportMetric(perSec(tlsTook), "tls-records/s")
	b.ReportMetric(perSec(plainTook), "plain-records/s")
	b.ReportMetric(perSec(tlsTook)/perSec(plainTook), "x-plain-rate")
	b.ReportMetric(perSec(bareTLS)/perSec(bareTCP), "bare-tls-x-tcp")
}

// publishWindowed publishes n batches keeping windowBatches in flight and
// returns how long they took, the last acknowledgement included.
func publishWindowed(b *testing.B, c *client.Client, s client.Stream, recs []client.Record, n int) time.Duration {
	ctx := testCtx(b)
	start := time.Now()
	window := make([]*client.PublishFuture, 0, windowBatches)
	for range n {
		if len(window) == windowBatches {
			waitFuture(b, ctx, window[0])
			window = window[1:]
		}
		window = append(window, c.PublishBatchAsync(ctx, s, recs))
	}
	for _, f := range window {
		waitFuture(b, ctx, f)
	}
	return time.Since(start)
}

func waitFuture(b *testing.B, ctx context.Context, f *client.PublishFuture) {
	if _, err := f.Wait(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTLSPublishAckLatency1KiB publishes one 1 KiB record at a time
// and waits for its acknowledgement, alternating between TLS and plain
// TCP, and reports the percentiles of each and the ratio of the medians.
func BenchmarkTLSPublishAckLatency1KiB(b *testing.B) {
	br, pool := startTLSBroker(b)
	plain := br.dial(b, client.WithPingInterval(0))
	secure := dialTLS(b, br, pool, client.WithPingInterval(0))
	s := createStream(b, plain, client.StreamConfig{Shards: 1, InMemory: true})
	value := make([]byte, recordBytes)
	ctx := testCtx(b)
	tlsLat, plainLat := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tlsLat = append(tlsLat, ackLatency(b, ctx, secure, s, value))
		plainLat = append(plainLat, ackLatency(b, ctx, plain, s, value))
	}
	b.StopTimer()
	t50, t99 := percentile(tlsLat, 50), percentile(tlsLat, 99)
	p50, p99 := percentile(plainLat, 50), percentile(plainLat, 99)
	b.ReportMetric(us(t50), "tls-p50-us")
	b.ReportMetric(us(t99), "tls-p99-us")
	b.ReportMetric(us(p50), "plain-p50-us")
	b.ReportMetric(us(p99), "plain-p99-us")
	b.ReportMetric(us(t50)/us(p50), "x-plain-p50")
}

func ackLatency(b *testing.B, ctx context.Context, c *client.Client, s client.Stream, value []byte) time.Duration {
	t0 := time.Now()
	if _, err := c.Publish(ctx, s, value); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// bareThroughput sends n messages of size bytes over conn, windowBatches
// at a time, to a peer that answers each with tcpAnswerBytes (ackServer),
// and returns the time from the first send to the last answer.
func bareThroughput(tb testing.TB, conn net.Conn, n, size int) time.Duration {
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

// ackServer reads messages of size bytes and answers each with
// tcpAnswerBytes.
func ackServer(size int) func(net.Conn) {
	return func(nc net.Conn) {
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
	}
}

// pairMessageBytes is a PUBLISH_BATCH's size, near enough.
const pairMessageBytes = batchRecords*(recordBytes+3) + 64

func plainPair(tb testing.TB) net.Conn {
	return loopbackPair(tb, ackServer(pairMessageBytes))
}

// tlsPair is loopbackPair over TLS, with the broker's kind of certificate.
func tlsPair(tb testing.TB) net.Conn {
	cert, pool := selfSigned(tb)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
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
		ackServer(pairMessageBytes)(nc)
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}
