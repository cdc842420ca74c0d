package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/workload"
	"github.com/felixbroker/felix/ring"
)

// benchShape are the knobs every workload takes.
type benchShape struct {
	Size        string        `help:"Record (value) size: 128, 1KiB, 4KiB." default:"1KiB"`
	Batch       int           `help:"Records per publish request or append." default:"1"`
	Connections int           `help:"Client connections (0: one per publisher)." default:"0"`
	Publishers  int           `help:"Concurrent publishers (or writers)." default:"1"`
	Subscribers int           `help:"Concurrent subscribers (e2e) or consumers (group)." default:"1"`
	Inflight    int           `help:"Requests each publisher keeps unanswered (1: synchronous publish)." default:"1"`
	Fsync       string        `help:"FsyncMode of the stream or log: none, periodic[:interval], on_commit." default:"periodic"`
	Duration    time.Duration `help:"How long each measurement runs (0 with --count: until the count)." default:"5s"`
	Count       int64         `help:"Records to move instead of a duration (all workers together)." default:"0"`
	Rate        float64       `help:"Open loop: records per second, all publishers together; latency from each request's intended send time (0: closed loop)." default:"0"`
	Warmup      time.Duration `help:"Publish this long, uncounted, before measuring (pub, e2e): a fresh stream's first segment is still being zero-filled." default:"0s"`
	Baseline    time.Duration `name:"baseline-duration" help:"How long each raw-limit baseline runs (at most --duration)." default:"2s"`
	IO          string        `name:"io" help:"IO path of in-process workloads and the embedded broker: auto, io_uring, portable." default:"auto"`
}

// spec turns the flags into a workload.Spec.
func (f *benchShape) spec() (workload.Spec, error) {
	var errs []error
	size, err := workload.ParseSize(f.Size)
	errs = append(errs, err)
	mode, err := workload.ParseFsync(f.Fsync)
	errs = append(errs, err)
	io, err := ring.ParseMode(f.IO)
	errs = append(errs, err)
	duration := f.Duration
	if f.Count > 0 && !f.durationSet() {
		duration = 0 // a count alone bounds the run
	}
	s := workload.Spec{RecordBytes: size, Batch: f.Batch, Connections: f.Connections, Publishers: f.Publishers,
		Subscribers: f.Subscribers, Inflight: f.Inflight, Fsync: mode, Duration: duration, Count: f.Count, Rate: f.Rate,
		Warmup: f.Warmup, BaselineDuration: f.Baseline, IO: io}
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	return s.WithDefaults()
}

// durationSet is whether --duration was given with a value other than its
// default; with --count, the default duration does not bound the run.
func (f *benchShape) durationSet() bool { return f.Duration != 5*time.Second }

// benchTarget is where the broker workloads send.
type benchTarget struct {
	Addr  string `help:"A running broker (or a cluster's seed); empty starts one on a temporary directory under --dir." placeholder:"HOST:PORT"`
	Token string `help:"Token for a broker with authorization on." env:"FELIX_TOKEN"`
}

// benchOut is where results go.
type benchOut struct {
	JSON   bool   `help:"Write the results as JSON (felix-bench/1) instead of a table."`
	CSV    bool   `help:"Write the results as CSV instead of a table."`
	Report string `help:"Also write a self-contained HTML report (charts inline, renders offline) into this directory." placeholder:"DIR"`
	Dir    string `help:"Directory on the disk under test: in-process workloads and the embedded broker make (and remove) a temporary directory in it. Not /tmp if it is a tmpfs." default:"." type:"existingdir"`
}

// progressFile is where a live line may go: standard output under a
// table, standard error when standard output carries JSON or CSV.
func (o *benchOut) progress() bench.ProgressHook {
	if o.JSON || o.CSV {
		return bench.ProgressTo(os.Stderr)
	}
	return bench.ProgressTo(os.Stdout)
}

// check refuses contradictory output flags before anything runs.
func (o *benchOut) check() error {
	if o.JSON && o.CSV {
		return fmt.Errorf("--json and --csv: choose one")
	}
	return nil
}

// write prints results in the chosen format and writes the report.
func (o *benchOut) write(results []bench.Result) error {
	var err error
	switch {
	case o.JSON:
		err = bench.WriteJSON(os.Stdout, results)
	case o.CSV:
		err = bench.WriteCSV(os.Stdout, results)
	default:
		err = bench.WriteTable(os.Stdout, results)
	}
	if err == nil && o.Report != "" {
		if err = bench.WriteReport(o.Report, results); err == nil && !o.JSON && !o.CSV {
			fmt.Fprintf(os.Stdout, "report: %s\n", reportPath(o.Report))
		}
	}
	return err
}

func reportPath(dir string) string { return dir + string(os.PathSeparator) + bench.ReportFile }
