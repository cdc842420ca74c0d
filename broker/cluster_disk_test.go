package broker

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
)

// A broker that comes back under its old id on a wiped data directory has
// a new disk id, so it is a new replica: it is not given its old shards
// (their records are not on it), it opens nothing of them, and a publish
// to them is refused through either broker instead of landing on an empty
// log at offset 0 as if nothing had been lost.
func TestABrokerOnAWipedDiskIsNotTakenForItsOldReplica(t *testing.T) {
	s := sharedStore(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	a := start(t, clustered("a", s, Config{DataDir: dirA}))
	b := start(t, clustered("b", s, Config{DataDir: dirB}))
	waitView(t, a.View(), "a sees a and b", registered(a.View(), "a", "b"))
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	if _, err := a.Engine().CreateStream(id, engine.StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	shard := shardOfB(t, a, b, id, streamOpen(b, id))
	key := client.WithKey(keyOf(shard, 2))
	if _, err := dial(t, a).Publish(testCtx(t), testStream, []byte("kept on b's old disk"), key); err != nil {
		t.Fatal(err)
	}
	oldDisk := b.DiskID()
	stop(t, b)
	if err := os.RemoveAll(dirB); err != nil {
		t.Fatal(err)
	}
	b = start(t, clustered("b", s, Config{DataDir: dirB}))
	if b.DiskID() == oldDisk {
		t.Fatalf("a wiped data directory kept its disk id %s", oldDisk)
	}
	waitView(t, a.View(), "a sees b registered again", registered(a.View(), "a", "b"))
	if b.View().Holds(id, shard) {
		t.Fatalf("b on a new disk holds shard %d of its old disk", shard)
	}
	if _, err := os.Stat(filepath.Join(dirB, "streams")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("b on a new disk opened stream files: %v", err)
	}
	for _, via := range []*Broker{a, b} {
		pos, err := dial(t, via).Publish(testCtx(t), testStream, []byte("lost?"), key)
		if err == nil {
			t.Fatalf("a publish to shard %d, whose only replica was wiped, acknowledged at %+v", shard, pos)
		}
		if !errors.Is(err, client.ErrNotLeader) {
			t.Fatalf("a publish to shard %d with no live replica: %v, want not_leader", shard, err)
		}
	}
}

// keyOf is a key that routes to shard of shards.
func keyOf(shard, shards int) []byte {
	for i := 0; ; i++ {
		k := []byte{byte('a' + i%26), byte('a' + i/26%26), byte('a' + i/676%26)}
		if engine.ShardFor(k, shards) == shard {
			return k
		}
	}
}

// shardOfB is a shard of owner's two that b leads, once a sees both
// placed and b has opened it (opened reports whether b has).
func shardOfB(t *testing.T, a, b *Broker, owner engine.StreamID, opened func(shard int) bool) int {
	t.Helper()
	waitView(t, a.View(), "a sees both shards placed", func() bool { return placedSeen(a, owner, 2) })
	shard := -1
	for i := range 2 {
		if leader, ok := a.View().LeaderBroker(owner, i); ok && leader == "b" {
			shard = i
		}
	}
	if shard < 0 {
		t.Fatal("b leads no shard")
	}
	waitRound(t, b, "b opened its shard", func() bool { return opened(shard) })
	return shard
}

// streamOpen reports whether b has shard of id open.
func streamOpen(b *Broker, id engine.StreamID) func(int) bool {
	return func(shard int) bool {
		st, err := b.Engine().Stream(id)
		return err == nil && st.Held(shard)
	}
}
