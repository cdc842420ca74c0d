package main

import (
	"context"
	"fmt"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/workload"
)

// benchCacheCmd is `felix bench cache`: a mix of gets and puts from N
// clients, each with a connection of its own and one request at a time.
type benchCacheCmd struct {
	benchCommon
	benchTarget
	benchOut
	Clients   int     `help:"Concurrent clients, each with a connection of its own and one request at a time." default:"16"`
	Keys      int     `help:"Distinct keys, drawn uniformly (each written once before the clock starts when there are gets)." default:"10000"`
	Gets      int     `help:"Share of the operations that are gets, in percent; the rest are puts (100: gets only, 0: puts only)." default:"50"`
	Rate      float64 `help:"Open loop: operations per second, all clients together; latency from each one's intended send time (0: closed loop)." default:"0"`
	InProcess bool    `name:"in-process" help:"The cache engine alone in this process (no broker, no network), beside a bare shard log's appends and reads."`
}

// spec sets the clients as the workers, each on a connection of its own.
func (c *benchCacheCmd) spec() (workload.Spec, error) {
	s, err := c.benchCommon.spec()
	s.Publishers, s.Connections, s.Rate = c.Clients, c.Clients, c.Rate
	if err != nil {
		return s, err
	}
	return s.WithDefaults()
}

func (c *benchCacheCmd) Run() error {
	shape, err := workload.CacheShape{Keys: c.Keys, GetPercent: c.Gets}.WithDefaults()
	if err != nil {
		return err
	}
	if c.InProcess {
		if c.Addr != "" {
			return fmt.Errorf("--in-process runs no broker: drop --addr")
		}
		return runInProcess(c, &c.benchOut, func(ctx context.Context, s workload.Spec) ([]bench.Result, error) {
			return workload.CacheInProcess(ctx, c.Dir, s, shape)
		})
	}
	return runAgainstBroker(c, c.benchTarget, &c.benchOut, func(ctx context.Context, t workload.Target, s workload.Spec) ([]bench.Result, error) {
		return workload.Cache(ctx, t, s, shape, nil)
	})
}
