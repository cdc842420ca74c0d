package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio/wire"
)

// A prefix watch of every shard (felix cache watch --prefix without
// --shard) delivers the retained values of keys on every shard, each line
// naming its shard.
func TestAPrefixWatchReadsEveryShard(t *testing.T) {
	addr := cliBroker(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cc, err := client.DialCluster(ctx, []string{addr})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ca := cc.Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: "flags"})
	if err := ca.Create(ctx, client.CacheConfig{Shards: 3}); err != nil {
		t.Fatal(err)
	}
	shards := map[int]bool{}
	for i := range 9 {
		k := fmt.Sprintf("p-%d", i)
		shards[wire.ShardFor([]byte(k), 3)] = true
		if _, err := ca.Put(ctx, []byte(k), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if len(shards) < 2 {
		t.Fatalf("the keys landed on %d shard(s): the test needs them spread", len(shards))
	}
	var watches []*client.ClusterWatch
	for sh := range 3 {
		w, err := ca.WatchRetained(ctx, []byte("p-"), client.WithPrefixOnShard(sh))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		watches = append(watches, w)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- printWatches(ctx, watches, pw); pw.Close() }()
	seen := map[string]bool{}
	for sc := bufio.NewScanner(pr); len(seen) < 9 && sc.Scan(); {
		f := strings.Fields(sc.Text())
		if len(f) >= 5 && f[0] == "shard" && strings.HasPrefix(f[4], "p-") {
			seen[f[4]] = true
		}
	}
	cancel()
	go io.Copy(io.Discard, pr) // the stop line
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(seen) != 9 {
		t.Fatalf("the watch of every shard delivered %d of the 9 keys: %v", len(seen), seen)
	}
}
