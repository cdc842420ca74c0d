package engine

import (
	"context"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// BenchmarkSubscriptionOfferNext100x1KiB is a live subscription's hot
// path: one flush of 100 framed 1 KiB records queued (offer) and pulled
// by the deliverer (Next), as netio's deliverer does.
func BenchmarkSubscriptionOfferNext100x1KiB(b *testing.B) {
	e := openEngine(b, vfs.NewMem())
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	sub, err := sh.Subscribe(SubscribeOptions{Start: StartLatest, QueueBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	value := make([]byte, 1024)
	var flush []byte
	for i := range 100 {
		flush = segment.AppendRecordParts(flush, int64(i), 1, 0, int64(i), nil, value)
	}
	ctx := context.Background()
	buf := make([]byte, 0, 256<<10)
	b.SetBytes(int64(len(flush)))
	b.ReportAllocs()
	for b.Loop() {
		sub.mu.Lock()
		sub.next = 0
		sub.mu.Unlock()
		sub.offer(flush)
		out, err := sub.Next(ctx, buf[:0], 256<<10)
		if err != nil || len(out) != len(flush) {
			b.Fatalf("Next: %d bytes of %d, %v", len(out), len(flush), err)
		}
	}
}
