// Command felix is the one binary: the broker, its clients and its tools.
//
//	felix serve                  run a broker
//	felix pub|sub                publish, subscribe
//	felix stream ...             create, list, describe, delete streams
//	felix cluster status         the brokers, and where each shard is led
//	felix token keygen|issue     signing keys and tokens for authorization
//	felix log verify|dump DIR    inspect a shard's log directory
//	felix bench WORKLOAD         measure Felix beside the machine's raw limits
//
// Run `felix --help` for the full list.
package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kong"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// cli is every subcommand. Each lives in a file of its own.
type cli struct {
	Serve   serveCmd         `cmd:"" help:"Run a broker (embedded defaults: localhost, ./felix-data, Periodic fsync)."`
	Pub     pubCmd           `cmd:"" help:"Publish records: the values given, or lines from standard input."`
	Sub     subCmd           `cmd:"" help:"Subscribe to one shard of a stream and print its records with their offsets."`
	Stream  streamCmd        `cmd:"" help:"Create, list, describe and delete streams."`
	Cache   cacheCmd         `cmd:"" help:"Create and drop caches; get, put, delete and watch their keys."`
	Counter counterCmd       `cmd:"" help:"Add to and read counters (kept beside a durable cache's values)."`
	Group   groupCmd         `cmd:"" help:"Consume a stream as a queue: poll and ack through a consumer group; list, describe, dead letters, redrive."`
	Cluster clusterCmd       `cmd:"" help:"Show the cluster: its brokers, and where each shard is and who leads it."`
	Log     logCmd           `cmd:"" help:"Inspect a shard's log directory: verify it, dump its records."`
	Token   tokenCmd         `cmd:"" help:"Make signing keys and issue tokens for brokers with authorization on."`
	Bench   benchCmd         `cmd:"" help:"Measure Felix on this machine beside the disk's and the network's raw limits: fsync, log, pub, e2e, cache, group, matrix."`
	Version kong.VersionFlag `help:"Print the version and exit."`
}

func main() {
	var c cli
	ctx := kong.Parse(&c,
		kong.Name("felix"),
		kong.Description("Felix: a durable pub/sub broker with a log-backed cache, counters and queues."),
		kong.UsageOnError(),
		kong.Vars{"version": version},
	)
	if err := ctx.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "felix:", err)
		os.Exit(1)
	}
}
