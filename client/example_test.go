package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/felixbroker/felix/broker"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment/vfs"
)

// startBroker runs a broker in this process, on an in-memory file system
// and a free loopback port. It returns the address to dial and a function
// that stops it.
func startBroker() (addr string, stop func()) {
	b, err := broker.Start(broker.Config{DataDir: "/data", FS: vfs.NewMem(), Net: netio.Config{Addr: "127.0.0.1:0"}})
	if err != nil {
		log.Fatal(err)
	}
	return b.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.Stop(ctx)
	}
}

var orders = client.Stream{Tenant: "acme", Namespace: "shop", Name: "orders"}

// Publish one record by key, then a batch, and see where they landed.
func ExampleClient_Publish() {
	addr, stop := startBroker()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, addr, client.WithName("example"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateStream(ctx, orders, client.StreamConfig{Shards: 4}); err != nil {
		log.Fatal(err)
	}

	key := []byte("customer-13")
	pos, err := c.Publish(ctx, orders, []byte("created"), client.WithKey(key))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("keyed record on shard", pos.Shard, "= xxh3(key) mod 4:", pos.Shard == client.ShardFor(key, 4))

	runs, err := c.PublishBatch(ctx, orders, []client.Record{{Value: []byte("a")}, {Value: []byte("b")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("unkeyed batch: %d records on shard %d from offset %d\n", runs[0].Count, runs[0].Shard, runs[0].FirstOffset)

	_, err = c.CreateStream(ctx, orders, client.StreamConfig{})
	fmt.Println("creating it again:", errors.Is(err, client.ErrAlreadyExists))
	// Output:
	// keyed record on shard 3 = xxh3(key) mod 4: true
	// unkeyed batch: 2 records on shard 0 from offset 0
	// creating it again: true
}

// Pipeline publishes without waiting for each acknowledgement.
func ExampleClient_PublishAsync() {
	addr, stop := startBroker()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateStream(ctx, orders, client.StreamConfig{Shards: 1}); err != nil {
		log.Fatal(err)
	}
	var futures []*client.PublishFuture
	for i := range 100 {
		futures = append(futures, c.PublishAsync(ctx, orders, fmt.Appendf(nil, "order-%d", i)))
	}
	last, err := futures[99].Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the 100th landed at offset", last[0].FirstOffset)
	// Output:
	// the 100th landed at offset 99
}

// Subscribe to a shard and read its events as they are published.
func ExampleClient_Subscribe() {
	addr, stop := startBroker()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateStream(ctx, orders, client.StreamConfig{Shards: 1}); err != nil {
		log.Fatal(err)
	}
	sub, err := c.Subscribe(ctx, orders, 0, client.SubscribeOptions{Start: client.FromLatest()})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	for _, v := range []string{"created", "paid", "shipped"} {
		if _, err := c.Publish(ctx, orders, []byte(v)); err != nil {
			log.Fatal(err)
		}
	}
	n := 0
	for ev, err := range sub.Events(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Missed > 0 {
			fmt.Println("dropped", ev.Missed, "records before offset", ev.Offset)
		}
		fmt.Printf("shard %d offset %d: %s\n", ev.Shard, ev.Offset, ev.Value)
		if n++; n == 3 {
			break
		}
	}
	// Output:
	// shard 0 offset 0: created
	// shard 0 offset 1: paid
	// shard 0 offset 2: shipped
}

// Resume a subscription from the offset after the last event handled:
// stored history joins live delivery with no gap and no duplicate.
func ExampleFromOffset() {
	addr, stop := startBroker()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateStream(ctx, orders, client.StreamConfig{Shards: 1}); err != nil {
		log.Fatal(err)
	}
	for i := range 5 {
		if _, err := c.Publish(ctx, orders, fmt.Appendf(nil, "event-%d", i)); err != nil {
			log.Fatal(err)
		}
	}
	lastHandled := int64(2) // say the application had handled offsets 0..2
	sub, err := c.Subscribe(ctx, orders, 0, client.SubscribeOptions{Start: client.FromOffset(lastHandled + 1)})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	if _, err := c.Publish(ctx, orders, []byte("event-5")); err != nil { // live, after the history
		log.Fatal(err)
	}
	for range 3 {
		ev, err := sub.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("offset %d: %s\n", ev.Offset, ev.Value)
	}
	// Output:
	// offset 3: event-3
	// offset 4: event-4
	// offset 5: event-5
}
