package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/workload"
)

// benchCmd is `felix bench`: how fast Felix is on this machine, beside
// the raw limits of the same disk and network, measured in the same run.
type benchCmd struct {
	Fsync  benchFsyncCmd  `cmd:"" help:"The disk's own limits: fdatasync latency, group-commit ceiling, page-cache bandwidth; bare, through io_uring and through the portable path."`
	Log    benchLogCmd    `cmd:"" help:"The storage engine alone, in process: appends to one shard log, beside the disk's limit."`
	Pub    benchPubCmd    `cmd:"" help:"Publish throughput and ack latency against a broker (one is started when --addr is empty)."`
	E2e    benchE2ECmd    `cmd:"" name:"e2e" help:"Publish-to-delivery latency with 1 or N subscribers (a timestamp in each payload)."`
	Cache  benchCacheCmd  `cmd:"" help:"Cache gets and puts, a mix of them from N clients, against a broker (one is started when --addr is empty), beside TCP round trips of the same sizes."`
	Group  benchGroupCmd  `cmd:"" help:"Consumer-group poll and ack with 1..N consumers against a broker, beside a plain subscription draining the same records."`
	Matrix benchMatrixCmd `cmd:"" help:"The standard set of publish shapes and the disk suite, in one report (what docs/benchmarks.md shows)."`
}

// benchContext ends at an interrupt, so a long run can be cut short and
// still clean up.
func benchContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// specer is a command's flags that make a workload.Spec.
type specer interface{ spec() (workload.Spec, error) }

// runInProcess runs a workload that needs only a directory.
func runInProcess(shape specer, out *benchOut, run func(ctx context.Context, s workload.Spec) ([]bench.Result, error)) error {
	if err := out.check(); err != nil {
		return err
	}
	s, err := shape.spec()
	if err != nil {
		return err
	}
	s.Progress = out.progress()
	ctx, cancel := benchContext()
	defer cancel()
	results, err := run(ctx, s)
	if err != nil {
		return err
	}
	return out.write(results)
}

// runAgainstBroker runs a workload against --addr or an embedded broker.
func runAgainstBroker(shape specer, target benchTarget, out *benchOut,
	run func(ctx context.Context, t workload.Target, s workload.Spec) ([]bench.Result, error)) (err error) {
	if err := out.check(); err != nil {
		return err
	}
	s, err := shape.spec()
	if err != nil {
		return err
	}
	s.Progress = out.progress()
	b, err := startBenchBroker(target, out.Dir, s.IO)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := b.stop(); err == nil && stopErr != nil {
			err = fmt.Errorf("bench: stopping the embedded broker: %w", stopErr)
		}
	}()
	ctx, cancel := benchContext()
	defer cancel()
	results, err := run(ctx, b.target, s)
	if err != nil {
		return err
	}
	return out.write(results)
}

type benchFsyncCmd struct {
	benchShape
	benchOut
	Writers string `help:"Writer counts of the group-commit ceiling." default:"1,16,64"`
}

func (c *benchFsyncCmd) Run() error {
	writers, err := workload.ParseList(c.Writers, workload.ParseInt)
	if err != nil {
		return err
	}
	if c.Size == "1KiB" {
		c.Size = "4KiB" // a page: the fdatasync figure people compare
	}
	if !c.durationSet() && c.Count == 0 {
		c.Duration = time.Second // per part: the suite has about 40
	}
	return runInProcess(&c.benchShape, &c.benchOut, func(ctx context.Context, s workload.Spec) ([]bench.Result, error) {
		return workload.Fsync(ctx, c.Dir, s, writers)
	})
}

type benchLogCmd struct {
	benchShape
	benchOut
}

func (c *benchLogCmd) Run() error {
	return runInProcess(&c.benchShape, &c.benchOut, func(ctx context.Context, s workload.Spec) ([]bench.Result, error) {
		r, err := workload.Log(ctx, c.Dir, s, nil)
		return []bench.Result{r}, err
	})
}

type benchPubCmd struct {
	benchShape
	benchTarget
	benchOut
}

func (c *benchPubCmd) Run() error {
	return runAgainstBroker(&c.benchShape, c.benchTarget, &c.benchOut, func(ctx context.Context, t workload.Target, s workload.Spec) ([]bench.Result, error) {
		r, err := workload.Pub(ctx, t, s, nil)
		return []bench.Result{r}, err
	})
}

type benchE2ECmd struct {
	benchShape
	benchTarget
	benchOut
}

func (c *benchE2ECmd) Run() error {
	return runAgainstBroker(&c.benchShape, c.benchTarget, &c.benchOut, func(ctx context.Context, t workload.Target, s workload.Spec) ([]bench.Result, error) {
		r, err := workload.E2E(ctx, t, s, nil)
		return []bench.Result{r}, err
	})
}
