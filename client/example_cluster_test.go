package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/felixbroker/felix/client"
)

// Dial a cluster through its seeds (one here is down: it is passed over),
// publish keyed records, and read every shard back through one sharded
// subscription, which says where to resume, one offset per shard.
func ExampleDialCluster() {
	addr, stop := startBroker()
	defer stop()
	ctx := context.Background()
	cc, err := client.DialCluster(ctx, []string{"127.0.0.1:1", addr}, client.WithName("example"))
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	events := client.Stream{Tenant: "acme", Namespace: "shop", Name: "events"}
	if _, err := cc.CreateStream(ctx, events, client.StreamConfig{Shards: 3}); err != nil {
		log.Fatal(err)
	}
	for i := range 6 {
		if _, err := cc.PublishAtLeastOnce(ctx, events, fmt.Appendf(nil, "e%d", i), client.WithKey(fmt.Appendf(nil, "user-%d", i))); err != nil {
			log.Fatal(err)
		}
	}
	sub, err := cc.SubscribeSharded(ctx, events, client.ShardedOptions{Start: client.FromEarliest()})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	perShard := map[int]int64{}
	for range 6 {
		ev, err := sub.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		perShard[ev.Shard]++
	}
	resume := sub.Offsets()
	fmt.Println("read 6 records over", len(perShard), "shards; resume offsets match:",
		resume[0] == perShard[0] && resume[1] == perShard[1] && resume[2] == perShard[2])
	// Output: read 6 records over 3 shards; resume offsets match: true
}
