// Command pubsub publishes keyed records over a sharded stream and reads
// them back from every shard, each with its shard and offset.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/felixbroker/felix/client"
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:7117", "brokers to start from, comma-separated")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cc, err := client.DialCluster(ctx, strings.Split(*brokers, ","))
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()

	stream := client.Stream{Tenant: "default", Namespace: "examples", Name: "orders"}
	if _, err := cc.CreateStream(ctx, stream, client.StreamConfig{Shards: 3}); err != nil && !errors.Is(err, client.ErrAlreadyExists) {
		log.Fatal(err)
	}
	customers := []string{"alice", "carol", "erin"} // their keys pick three shards here
	for i := range 9 {
		key := customers[i%len(customers)] // one customer's orders stay on one shard, in order
		pos, err := cc.Publish(ctx, stream, fmt.Appendf(nil, "order %d", i), client.WithKey([]byte(key)))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("published order %d for %s at shard %d offset %d\n", i, key, pos.Shard, pos.Offset)
	}

	sub, err := cc.SubscribeSharded(ctx, stream, client.ShardedOptions{Start: client.FromEarliest()})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	for n := 0; n < 9; n++ {
		ev, err := sub.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("read [%d:%d] %s %s\n", ev.Shard, ev.Offset, ev.Key, ev.Value)
	}
}
