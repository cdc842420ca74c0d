package broker

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/datadir"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment/vfs"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func start(t *testing.T, cfg Config) *Broker {
	t.Helper()
	if cfg.Net.Addr == "" {
		cfg.Net.Addr = "127.0.0.1:0"
	}
	b, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Stop(context.Background()) })
	return b
}

func dial(t *testing.T, b *Broker) *client.Client {
	t.Helper()
	c, err := client.Dial(testCtx(t), b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var testStream = client.Stream{Tenant: "t", Namespace: "n", Name: "s"}

// A broker on the OS file system keeps what it acknowledged across a stop
// and a start, and serves streams, caches, groups and producers at once.
func TestABrokerServesEveryPartAndKeepsItsRecordsAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	b := start(t, Config{DataDir: dir, AdminAddr: "127.0.0.1:0"})
	if b.DiskID() == "" || b.AdminAddr() == "" {
		t.Fatalf("disk id %q, admin %q", b.DiskID(), b.AdminAddr())
	}
	c := dial(t, b)
	ctx := testCtx(t)
	if _, err := c.CreateStream(ctx, testStream, client.StreamConfig{Fsync: client.Fsync{Kind: client.FsyncOnCommit}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish(ctx, testStream, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Producer(testStream).PublishBatch(ctx, 0, []client.Record{{Value: []byte("once")}}); err != nil {
		t.Fatal(err)
	}
	ca := c.Cache(client.CacheName{Tenant: "t", Namespace: "n", Name: "c"})
	if err := ca.Create(ctx, client.CacheConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Put(ctx, []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	disk := b.DiskID()
	c.Close()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	again := start(t, Config{DataDir: dir})
	c2 := dial(t, again)
	info, err := c2.DescribeStream(ctx, testStream)
	if err != nil || info.Shards[0].NextOffset != 2 || again.DiskID() != disk {
		t.Fatalf("after a restart: %+v %v, disk id %q then %q", info, err, disk, again.DiskID())
	}
	if it, err := c2.Cache(client.CacheName{Tenant: "t", Namespace: "n", Name: "c"}).Get(ctx, []byte("k")); err != nil || string(it.Value) != "v" {
		t.Fatalf("the cache after a restart: %+v %v", it, err)
	}
	if _, err := c2.Group(testStream, 0, "g").Poll(ctx, 10, 0); err != nil {
		t.Fatalf("a group poll: %v", err)
	}
}

// Start that fails closes what it opened: the data directory's lock is
// free again for the next broker.
func TestAFailedStartReleasesTheDataDirectory(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	if _, err := Start(Config{DataDir: dir, Net: netio.Config{Addr: taken.Addr().String()}}); err == nil {
		t.Fatal("a broker started on a taken address")
	}
	l, err := datadir.Acquire(dir)
	if err != nil {
		t.Fatalf("the failed start kept the lock: %v", err)
	}
	l.Release()
}

// Two brokers in one process, each on its own memory file system, serve
// apart; a second on the same OS directory is refused.
func TestBrokersInOneProcessAreApart(t *testing.T) {
	one := start(t, Config{DataDir: "/data", FS: vfs.NewMem()})
	two := start(t, Config{DataDir: "/data", FS: vfs.NewMem()})
	ctx := testCtx(t)
	if _, err := dial(t, one).CreateStream(ctx, testStream, client.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dial(t, two).DescribeStream(ctx, testStream); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("the other broker sees the stream: %v", err)
	}
	dir := t.TempDir()
	start(t, Config{DataDir: dir})
	if _, err := Start(Config{DataDir: dir, Net: netio.Config{Addr: "127.0.0.1:0"}}); !errors.Is(err, datadir.ErrLocked) {
		t.Fatalf("a second broker on one directory: %v", err)
	}
}

func TestStopTwiceReturnsTheFirstResult(t *testing.T) {
	b := start(t, Config{})
	if err := b.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(context.Background()); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

// elsewhere leads nothing here: every shard's leader is another broker.
type elsewhere struct{}

func (elsewhere) Leader(engine.StreamID, int) (bool, string) { return false, "10.0.0.2:7117" }

// Config.Owner is the one ownership source: the engine's publishes, the
// caches' writes, the groups' polls, the producers' sequences and the
// server's subscribes all ask it, and each refusal names the leader.
func TestOneOwnerIsAskedByEveryPart(t *testing.T) {
	b := start(t, Config{DataDir: "/data", FS: vfs.NewMem(), Owner: elsewhere{}})
	c := dial(t, b)
	ctx := testCtx(t)
	if _, err := c.CreateStream(ctx, testStream, client.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	ca := c.Cache(client.CacheName{Tenant: "t", Namespace: "n", Name: "c"})
	if err := ca.Create(ctx, client.CacheConfig{}); err != nil {
		t.Fatal(err)
	}
	leads := func(what string, err error) {
		t.Helper()
		var se *client.ServerError
		if !errors.Is(err, client.ErrNotLeader) || !errors.As(err, &se) || se.Details.LeaderAddr != "10.0.0.2:7117" {
			t.Fatalf("%s on a broker that leads nothing: %v", what, err)
		}
	}
	_, err := c.Publish(ctx, testStream, []byte("x"))
	leads("a publish", err)
	_, err = c.Producer(testStream).PublishBatch(ctx, 0, []client.Record{{Value: []byte("x")}})
	leads("an idempotent publish", err)
	_, err = ca.Put(ctx, []byte("k"), []byte("v"))
	leads("a cache put", err)
	_, err = c.Group(testStream, 0, "g").Poll(ctx, 1, 0)
	leads("a group poll", err)
	_, err = c.Subscribe(ctx, testStream, 0, client.SubscribeOptions{Start: client.FromEarliest()})
	leads("a subscribe", err)
}
