package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// keyFor returns a routing key that chooses shard of shards.
func keyFor(t *testing.T, shard, shards int) string {
	t.Helper()
	for i := range 1000 {
		if k := fmt.Sprint("k", i); ShardFor([]byte(k), shards) == shard {
			return k
		}
	}
	t.Fatalf("no key for shard %d", shard)
	return ""
}

// damageFirstSegment flips a byte inside a record of the first segment of
// the stream's shard, before its index's last entry, where only the
// background verification or a read can find it. It returns the file and
// the byte.
func damageFirstSegment(t *testing.T, fs vfs.FS, shard int) (string, int64) {
	t.Helper()
	path := filepath.Join(shardDir("/data", sid, shard), segment.SegmentName(0))
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	sum, err := segment.Scan(f, size, segment.ScanOptions{Sealed: true, IndexIntervalBytes: 256})
	if err != nil || len(sum.Index) < 3 {
		t.Fatalf("scan of %s: %d entries, %v", path, len(sum.Index), err)
	}
	pos := int64(sum.Index[1].Pos) + segment.RecordHeaderSize
	b := make([]byte, 1)
	f.ReadAt(b, pos)
	b[0] ^= 0x10
	if _, err := f.WriteAtSync(b, pos); err != nil {
		t.Fatal(err)
	}
	return path, pos
}

func checkOffline(t *testing.T, err error, path string, pos int64) {
	t.Helper()
	var ce *segment.CorruptionError
	if !errors.Is(err, shardlog.ErrOffline) || !errors.As(err, &ce) || ce.File != path || ce.Pos > pos {
		t.Fatalf("got %v, want the shard offline with damage in %s at or before byte %d", err, path, pos)
	}
}

// A byte flipped in an early sealed segment of one shard no longer refuses
// the engine's open. Once that shard's log has verified it, the shard is
// offline: its reads, publishes and subscriptions fail naming the file and
// the byte, its Changed waiters wake. The stream's other shard serves
// reads, publishes and subscriptions as before.
func TestADamagedShardGoesOfflineAndTheOthersServe(t *testing.T) {
	fs := vfs.NewMem()
	e := openEngine(t, fs)
	if _, err := e.CreateStream(sid, StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	s, _ := e.Stream(sid)
	keys := []string{keyFor(t, 0, 2), keyFor(t, 1, 2)}
	for i := range 400 {
		var batch []Record
		for j := range 10 {
			batch = append(batch, rec(keys[(i+j)%2], i*10+j))
		}
		publish(t, s, batch...)
	}
	e.Close()
	path, pos := damageFirstSegment(t, fs, 0)
	e = openEngine(t, fs)
	defer e.Close()
	s, _ = e.Stream(sid)
	damaged, healthy := s.slot(0), s.slot(1)
	sub, subErr := damaged.Subscribe(SubscribeOptions{Start: StartLatest})
	waitVerified(t, damaged)
	checkOffline(t, damaged.Err(), path, pos)
	if subErr == nil { // subscribed before the verifier got there: ended with the damage
		_, subErr = sub.Next(context.Background(), nil, 1<<20)
	}
	checkOffline(t, subErr, path, pos)
	_, _, err := damaged.Read(damaged.End()-1, 1<<20, nil)
	checkOffline(t, err, path, pos)
	checkOffline(t, s.Publish([]Record{rec(keys[0], 0)}, newWaiter()), path, pos)
	select {
	case <-damaged.Changed():
	default:
		t.Fatal("Changed of an offline shard is not closed")
	}
	checkServes(t, s, healthy, keys[1])
}

// checkServes asserts shard sh of s reads every record it holds, takes a
// publish and delivers it to a subscription.
func checkServes(t *testing.T, s *Stream, sh *Shard, key string) {
	t.Helper()
	for from := sh.Start(); from < sh.End(); {
		_, next, err := sh.Read(from, 1<<20, nil)
		if err != nil || next <= from {
			t.Fatalf("read of the healthy shard at %d: next %d, %v", from, next, err)
		}
		from = next
	}
	sub, err := sh.Subscribe(SubscribeOptions{Start: StartLatest})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	publish(t, s, rec(key, 1))
	if got := collect(t, sub, 1); len(got) != 1 {
		t.Fatalf("the healthy shard delivered %d records", len(got))
	}
}

func waitVerified(t *testing.T, sh *Shard) {
	t.Helper()
	select {
	case <-sh.log.(*diskLog).current().Verified():
	case <-time.After(20 * time.Second):
		t.Fatal("the shard's log did not finish verifying")
	}
}
