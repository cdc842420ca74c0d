// Command producer publishes batches with an idempotent producer: a batch
// sent again (after a lost answer, say) lands once, and a batch in flight
// when its shard's leader is lost comes back as client.ErrUnknownOutcome
// rather than landing twice or vanishing.
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

	stream := client.Stream{Tenant: "default", Namespace: "examples", Name: "payments"}
	if _, err := cc.CreateStream(ctx, stream, client.StreamConfig{Shards: 1}); err != nil && !errors.Is(err, client.ErrAlreadyExists) {
		log.Fatal(err)
	}
	p := cc.Producer(stream)
	for b := range 3 {
		batch := []client.Record{{Value: fmt.Appendf(nil, "payment %d-a", b)}, {Value: fmt.Appendf(nil, "payment %d-b", b)}}
		ack, err := p.PublishBatch(ctx, 0, batch)
		switch {
		case errors.Is(err, client.ErrUnknownOutcome):
			fmt.Printf("batch %d: outcome unknown (its leader was lost); read the shard to see whether it landed\n", b)
			continue
		case err != nil:
			log.Fatal(err)
		}
		fmt.Printf("batch %d: sequence %d at offsets %d..%d (duplicate %v)\n", b, ack.Sequence, ack.FirstOffset,
			ack.FirstOffset+int64(ack.Count)-1, ack.Duplicate)
	}
}
