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
// Run `felix --help` for the full list. A usage error prints one line and
// where the help is on stderr, and exits 2; a command that fails exits 1.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"
)

// cli is every subcommand. Each lives in a file of its own.
type cli struct {
	Serve      serveCmd         `cmd:"" help:"Run a broker (embedded defaults: localhost, ./felix-data, Periodic fsync)."`
	Pub        pubCmd           `cmd:"" help:"Publish records: the values given, or lines from standard input."`
	Sub        subCmd           `cmd:"" help:"Subscribe to a stream (every shard, or --shard N) and print its records with their shard and offset."`
	Stream     streamCmd        `cmd:"" help:"Create, list, describe and delete streams."`
	Cache      cacheCmd         `cmd:"" help:"Create and drop caches; get, put, delete and watch their keys."`
	Counter    counterCmd       `cmd:"" help:"Add to and read counters (kept beside a durable cache's values)."`
	Group      groupCmd         `cmd:"" help:"Consume a stream as a queue: poll and ack through a consumer group; list, describe, dead letters, redrive."`
	Cluster    clusterCmd       `cmd:"" help:"Show the cluster: its brokers, and where each shard is and who leads it."`
	Status     statusCmd        `cmd:"" help:"Is this broker, and its cluster, healthy? One screen from the admin server; exit 1 when not."`
	Log        logCmd           `cmd:"" help:"Inspect a shard's log directory: verify it, dump its records."`
	Token      tokenCmd         `cmd:"" help:"Make signing keys and issue tokens for brokers with authorization on."`
	Bench      benchCmd         `cmd:"" help:"Measure Felix on this machine beside the disk's and the network's raw limits: fsync, log, pub, e2e, cache, group, matrix."`
	VersionCmd versionCmd       `cmd:"" name:"version" help:"Print the version, the commit it was built from, and the Go toolchain."`
	Completion completionCmd    `cmd:"" help:"Print a shell completion script: source <(felix completion bash), or zsh, or fish."`
	Complete   completeCmd      `cmd:"" name:"__complete" hidden:"" help:"Answer a completion script: the candidates for the last word."`
	Version    kong.VersionFlag `help:"Print the version and exit."`
}

// newParser is the command line's parser, for main and the tests alike
// (a negative number where a positional argument stands: negative.go).
func newParser(c *cli, extra ...kong.Option) (*kong.Kong, error) {
	opts := append([]kong.Option{
		kong.Name("felix"),
		kong.Description("Felix: a durable pub/sub broker with a log-backed cache, counters and queues."),
		kong.Vars{"version": version},
	}, extra...)
	return kong.New(c, opts...)
}

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// The exit statuses: a command that failed, and a command line that could
// not be taken (a usage error: one line on stderr, not the whole help).
const (
	exitFailed = 1
	exitUsage  = 2
)

// run parses args and runs the command they name.
func run(args []string, stderr io.Writer) int {
	var c cli
	parser, err := newParser(&c)
	if err != nil {
		fmt.Fprintln(stderr, "felix:", err)
		return exitFailed
	}
	ctx, err := parser.Parse(args)
	if retry, ok := negativeAsPositional(args, err); ok {
		ctx, err = parser.Parse(retry)
	}
	if err != nil {
		fmt.Fprintf(stderr, "felix: %v\nsee '%s --help'\n", err, helpPath(err))
		return exitUsage
	}
	if err := ctx.Run(); err != nil {
		fmt.Fprintln(stderr, "felix:", explain(err))
		return exitFailed
	}
	return 0
}

// helpPath is the command whose help a usage error points to: the one
// the arguments had reached.
func helpPath(err error) string {
	var pe *kong.ParseError
	if errors.As(err, &pe) && pe.Context != nil {
		if n := pe.Context.Selected(); n != nil {
			return n.FullPath()
		}
	}
	return "felix"
}
