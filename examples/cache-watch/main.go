// Command cache-watch creates a cache, writes a key, and watches it with a
// retained watch: the key's current value first, then each live write.
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

	cache := cc.Cache(client.CacheName{Tenant: "default", Namespace: "examples", Name: "config"})
	if err := cache.Create(ctx, client.CacheConfig{Shards: 2}); err != nil && !errors.Is(err, client.ErrAlreadyExists) {
		log.Fatal(err)
	}
	key := []byte("feature-flags")
	if _, err := cache.Put(ctx, key, []byte(`{"dark_mode": false}`)); err != nil {
		log.Fatal(err)
	}
	w, err := cache.WatchRetained(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	go func() { // a writer elsewhere
		for i := range 3 {
			if _, err := cache.Put(ctx, key, fmt.Appendf(nil, `{"dark_mode": %v}`, i%2 == 0)); err != nil {
				log.Print(err)
			}
		}
	}()
	for seen := 0; seen < 4; {
		ev, err := w.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if ev.Kind == client.WatchPut || ev.Kind == client.WatchSnapshot {
			fmt.Printf("%s = %s (offset %d)\n", ev.Key, ev.Value, ev.Offset)
			seen++
		}
	}
}
