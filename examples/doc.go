// Package examples holds small programs, one a directory, that use the
// cluster client (client.DialCluster) against a running broker or
// cluster: `make run` in one terminal, then `go run ./examples/pubsub`
// (each takes -brokers, default 127.0.0.1:7117). `make test` builds them,
// so they stay in step with the client's API.
//
//	pubsub       publish keyed records over a sharded stream, read every shard
//	cache-watch  a cache with a retained watch: current value, then live writes
//	group        a consumer group over every shard: poll, ack, nack
//	producer     an idempotent producer: a batch lands once, even sent again
package examples
