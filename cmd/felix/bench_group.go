package main

import (
	"context"
	"fmt"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/workload"
)

// benchGroupCmd is `felix bench group`: a stream filled with --count
// records, drained once by a plain subscription and then by a fresh
// consumer group per consumer count.
type benchGroupCmd struct {
	benchCommon
	benchTarget
	benchOut
	Batch     int    `help:"Records each poll asks for." default:"64"`
	Consumers string `help:"Consumer counts, each a drain of every record by a fresh group with that many consumers, each on a connection of its own." default:"1,4"`
	SyncAck   bool   `name:"sync-ack" help:"Wait for each ack before the next poll (default: send it and poll again at once, one ack in flight)."`
	InProcess bool   `name:"in-process" help:"The engine and a group manager alone in this process (no broker, no network), beside the engine's own subscription; acks are synchronous."`
}

func (c *benchGroupCmd) spec() (workload.Spec, error) {
	s, err := c.benchCommon.spec()
	s.Batch = c.Batch
	if err != nil {
		return s, err
	}
	return s.WithDefaults()
}

func (c *benchGroupCmd) Run() error {
	consumers, err := workload.ParseList(c.Consumers, workload.ParseInt)
	if err != nil {
		return err
	}
	shape, err := workload.GroupShape{Consumers: consumers, SyncAck: c.SyncAck}.WithDefaults()
	if err != nil {
		return err
	}
	if c.InProcess {
		if c.Addr != "" {
			return fmt.Errorf("--in-process runs no broker: drop --addr")
		}
		return runInProcess(c, &c.benchOut, func(ctx context.Context, s workload.Spec) ([]bench.Result, error) {
			return workload.GroupInProcess(ctx, c.Dir, s, shape)
		})
	}
	return runAgainstBroker(c, c.benchTarget, &c.benchOut, func(ctx context.Context, t workload.Target, s workload.Spec) ([]bench.Result, error) {
		return workload.Group(ctx, t, s, shape)
	})
}
