// Command group consumes a stream as a queue: one consumer of a group
// over every shard, acking what it handled and giving back what it could
// not, which is delivered again.
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

	stream := client.Stream{Tenant: "default", Namespace: "examples", Name: "jobs"}
	if _, err := cc.CreateStream(ctx, stream, client.StreamConfig{Shards: 2}); err != nil && !errors.Is(err, client.ErrAlreadyExists) {
		log.Fatal(err)
	}
	for i := range 4 {
		if _, err := cc.Publish(ctx, stream, fmt.Appendf(nil, "job %d", i), client.WithKey(fmt.Appendf(nil, "k%d", i))); err != nil {
			log.Fatal(err)
		}
	}
	workers, err := cc.ShardedGroup(ctx, stream, "workers", client.ShardedGroupOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer workers.Close()
	gaveBack := false
	for done := 0; done < 4; {
		m, err := workers.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if !gaveBack { // the first job fails once: given back, it comes again
			gaveBack = true
			fmt.Printf("giving back [%d:%d] %s\n", m.Shard, m.Offset, m.Value)
			if err := workers.Nack(ctx, 0, m); err != nil {
				log.Fatal(err)
			}
			continue
		}
		fmt.Printf("done with [%d:%d] %s (delivery %d)\n", m.Shard, m.Offset, m.Value, m.Deliveries)
		if err := workers.Ack(ctx, m); err != nil {
			log.Fatal(err)
		}
		done++
	}
}
