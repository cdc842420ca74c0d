package engine

import (
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// BenchmarkPublishToADurableShard publishes one 100-byte record per op to
// a durable shard (None, in memory), waking its committer each time: the
// path every durable publish takes through the shard's diskLog, the
// indirection that lets a shard out of space be reopened.
func BenchmarkPublishToADurableShard(b *testing.B) {
	e, err := Open(Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.None()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateStream(sid, StreamConfig{Shards: 1, Durable: true}); err != nil {
		b.Fatal(err)
	}
	s, _ := e.Stream(sid)
	recs := []Record{{Value: make([]byte, 100)}}
	w := &countWaiter{}
	b.SetBytes(100)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Publish(recs, w); err != nil {
			b.Fatal(err)
		}
	}
}
