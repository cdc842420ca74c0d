package e2e

import (
	"fmt"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/segment/vfs"
)

// Records the broker acknowledged are there after it restarts on the same
// directory: a subscriber from earliest reads every one, in order, on the
// shard and at the offset its acknowledgement named.
func TestAcknowledgedRecordsSurviveABrokerRestart(t *testing.T) {
	for _, fsync := range []client.FsyncKind{client.FsyncPeriodic, client.FsyncOnCommit} {
		t.Run(string(fsync), func(t *testing.T) {
			b := newBroker(t)
			c := b.dial(t)
			ctx := testCtx(t)
			s := createStream(t, c, client.StreamConfig{Shards: shards, Fsync: client.Fsync{Kind: fsync}})
			type landed struct {
				pos   client.Position
				value string
			}
			var acked []landed
			for i := range 300 {
				v := fmt.Sprintf("record-%d", i)
				pos, err := c.Publish(ctx, s, []byte(v), client.WithKey(fmt.Appendf(nil, "k%d", i%7)))
				if err != nil {
					t.Fatal(err)
				}
				acked = append(acked, landed{pos, v})
			}
			b = b.restart()
			c2 := b.dial(t)
			byShard := make([][]landed, shards)
			for _, a := range acked {
				byShard[a.pos.Shard] = append(byShard[a.pos.Shard], a)
			}
			for shard, want := range byShard {
				sub, err := c2.Subscribe(ctx, s, shard, client.SubscribeOptions{Start: client.FromEarliest()})
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range want {
					ev, err := sub.Next(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if ev.Offset != w.pos.Offset || string(ev.Value) != w.value {
						t.Fatalf("shard %d after the restart: offset %d %q, want %d %q", shard, ev.Offset, ev.Value, w.pos.Offset, w.value)
					}
				}
				_ = sub.Close()
			}
		})
	}
}

// Under OnCommit an acknowledgement means the record was synced: it
// survives a crash that keeps only synced bytes.
func TestAnOnCommitAcknowledgementSurvivesACrash(t *testing.T) {
	mem := vfs.NewMem()
	b := startBroker(t, mem, "/data")
	c := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: 1, Fsync: client.Fsync{Kind: client.FsyncOnCommit}})
	const n = 100
	for i := range n {
		if _, err := c.Publish(ctx, s, fmt.Appendf(nil, "r%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	image := mem.Crash(vfs.DropUnsynced)
	_ = c.Close()
	b.stopAfterCrash()
	after := startBroker(t, image, "/data")
	c2 := after.dial(t)
	sub, err := c2.Subscribe(ctx, s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := range n {
		ev, err := sub.Next(ctx)
		if err != nil || ev.Offset != int64(i) || string(ev.Value) != fmt.Sprintf("r%d", i) {
			t.Fatalf("after the crash, offset %d: %d %q %v", i, ev.Offset, ev.Value, err)
		}
	}
}

// The zero value of a config a user fills in is the safe choice: a stream
// created with nothing but a shard count keeps what it acknowledged across
// a restart.
func TestAZeroConfigStreamIsDurable(t *testing.T) {
	mem := vfs.NewMem()
	b := startBroker(t, mem, "/data")
	c := b.dial(t)
	ctx := testCtx(t)
	s := createStream(t, c, client.StreamConfig{Shards: 3})
	if _, err := c.Publish(ctx, s, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	b.stop()
	after := startBroker(t, mem, "/data")
	info, err := after.dial(t).DescribeStream(ctx, s)
	if err != nil || info.Config.InMemory || len(info.Shards) != 3 || info.Shards[0].NextOffset != 1 {
		t.Fatalf("the stream after a restart: %+v %v", info, err)
	}
}

// And a cache created with nothing but a shard count.
func TestAZeroConfigCacheIsDurable(t *testing.T) {
	b := startCacheBroker(t, nil)
	ctx := testCtx(t)
	ca := newCache(t, b.client(), "zero", client.CacheConfig{Shards: 2})
	if _, err := ca.Put(ctx, []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	b.restart()
	n := ca.Name()
	if it, err := b.client().Cache(client.CacheName{Tenant: n.Tenant, Namespace: n.Namespace, Name: n.Name}).Get(ctx, []byte("k")); err != nil || string(it.Value) != "v" {
		t.Fatalf("the cache after a restart: %+v %v", it, err)
	}
}
