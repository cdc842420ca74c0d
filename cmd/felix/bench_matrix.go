package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/workload"
	"github.com/felixbroker/felix/ring"
)

// benchMatrixCmd runs the standard set. Its lists default to the standard
// set's; --quick runs every shape for a tenth of the time.
type benchMatrixCmd struct {
	benchTarget
	benchOut
	Quick      bool   `help:"A tenth of the time per shape (about a minute in all): the shape of the figures, not figures to quote."`
	Sizes      string `help:"Record sizes." default:"128,1KiB,4KiB"`
	Batches    string `help:"Records per publish request." default:"1,64"`
	Fsyncs     string `help:"FsyncModes." default:"none,periodic,on_commit"`
	Publishers string `help:"Publisher counts (each with a connection of its own, one request in flight)." default:"1,16,64"`
	IO         string `name:"io" help:"IO path of the embedded broker: auto, io_uring, portable." default:"auto"`
}

func (c *benchMatrixCmd) matrix() (workload.MatrixSpec, error) {
	m := workload.StandardMatrix(c.Quick)
	var errs [4]error
	m.RecordBytes, errs[0] = workload.ParseList(c.Sizes, workload.ParseSize)
	m.Batches, errs[1] = workload.ParseList(c.Batches, workload.ParseInt)
	m.Fsyncs, errs[2] = workload.ParseList(c.Fsyncs, workload.ParseFsync)
	m.Publishers, errs[3] = workload.ParseList(c.Publishers, workload.ParseInt)
	return m, errors.Join(errs[:]...)
}

func (c *benchMatrixCmd) Run() (err error) {
	if err := c.check(); err != nil {
		return err
	}
	m, err := c.matrix()
	if err != nil {
		return err
	}
	io, err := ring.ParseMode(c.IO)
	if err != nil {
		return err
	}
	b, err := startBenchBroker(c.benchTarget, c.Dir, io)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := b.stop(); err == nil && stopErr != nil {
			err = stopErr
		}
	}()
	ctx, cancel := benchContext()
	defer cancel()
	base := workload.Spec{Inflight: 1, IO: io, Progress: c.progress()}
	results, err := workload.Matrix(ctx, b.target, base, m, c.noteDone(len(m.Shapes(base))))
	if err != nil {
		if len(results) == 0 {
			return err
		}
		fmt.Fprintf(os.Stderr, "felix: matrix stopped early: %v (writing the %d results so far)\n", err, len(results))
	}
	if werr := c.write(results); werr != nil {
		return werr
	}
	if !c.JSON && !c.CSV {
		fmt.Fprintln(os.Stdout)
		if serr := workload.WriteSummary(os.Stdout, results); serr != nil {
			return serr
		}
	}
	return err
}

// noteDone prints a line per finished shape on standard error when it is a
// terminal, so a ten-minute run shows where it is.
func (c *benchMatrixCmd) noteDone(shapes int) func(bench.Result) {
	if !bench.ProgressEnabled(os.Stderr) {
		return nil
	}
	n := 0
	return func(r bench.Result) {
		if r.Workload != "pub" {
			return
		}
		n++
		fmt.Fprintf(os.Stderr, "\r\x1b[K[%d/%d] %s  %.0f records/s\n", n, shapes, r.Params, r.RecordsPerSec)
	}
}
