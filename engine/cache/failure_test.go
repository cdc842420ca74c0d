package cache

import (
	"errors"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// A failed write stops the shard: the write fails, and so does every later
// operation on the shard (its index may name a write the disk never got),
// while the other shards go on. Reopening rebuilds it from disk.
func TestAFailedWriteStopsTheShardUntilReopened(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	s := openStore(t, testOptions(efs, nil))
	if _, err := s.Create(cid, Config{Durable: true, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	k0, k1 := []byte("a"), []byte("b")
	for c.ShardFor(k1) == c.ShardFor(k0) {
		k1 = append(k1, 'b')
	}
	put(t, c, "a", "kept", PutOptions{})
	put(t, c, string(k1), "other", PutOptions{})
	efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: "shard-0000/values", Err: syscall.EIO})
	efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: "shard-0001/values", Err: syscall.EIO})
	failing := k0
	if c.ShardFor(k1) == 0 {
		failing = k1
	}
	_, err := c.Put(failing, []byte("lost"), PutOptions{})
	if !errors.Is(err, shardlog.ErrPoisoned) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("put over a failing disk: %v", err)
	}
	if _, err := c.Get(failing, nil); !errors.Is(err, shardlog.ErrPoisoned) {
		t.Fatalf("get on a failed shard: %v", err)
	}
	if _, err := c.Watch(WatchOptions{Key: failing, Retained: true}); !errors.Is(err, shardlog.ErrPoisoned) {
		t.Fatalf("watch on a failed shard: %v", err)
	}
	other := k1
	if string(failing) == string(k1) {
		other = k0
	}
	if _, err := c.Get(other, nil); err != nil {
		t.Fatalf("the other shard stopped too: %v", err)
	}
	s.Close()
	efs.Clear()
	s = openStore(t, testOptions(mem, nil))
	defer s.Close()
	c = mustCache(t, s)
	it := get(t, c, string(failing))
	if want := map[string]string{"a": "kept", string(k1): "other"}[string(failing)]; it.Found && string(it.Value) != want && string(it.Value) != "lost" {
		t.Fatalf("after reopening: %q", it.Value)
	}
	put(t, c, string(failing), "again", PutOptions{})
	wantValue(t, c, string(failing), "again", -1)
}
