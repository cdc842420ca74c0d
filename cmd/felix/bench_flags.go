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

// benchCommon are the knobs every workload takes.
type benchCommon struct {
	Size     string        `help:"Record (value) size: 128, 1KiB, 4KiB." default:"1KiB"`
	Fsync    string        `help:"FsyncMode of the stream, log or cache: none, periodic[:interval], on_commit." default:"periodic"`
	Duration time.Duration `help:"How long each measurement runs (0 with --count: until the count)." default:"5s"`
	Count    int64         `help:"Records to move instead of a duration, all workers together (cache: operations; group: records to fill the stream with and drain)." default:"0"`
	Baseline time.Duration `name:"baseline-duration" help:"How long each raw-limit baseline runs (at most --duration)." default:"2s"`
	IO       string        `name:"io" help:"IO path of in-process workloads and the embedded broker: auto, io_uring, portable." default:"auto"`
}

// benchShape are the knobs of the publishing workloads (and of the disk
// and log, which take the same shapes).
type benchShape struct {
	benchCommon
	Batch       int           `help:"Records per publish request or append." default:"1"`
	Connections int           `help:"Client connections (0: one per publisher)." default:"0"`
	Publishers  int           `help:"Concurrent publishers (or writers)." default:"1"`
	Subscribers int           `help:"Concurrent subscribers (e2e)." default:"1"`
	Inflight    int           `help:"Requests each publisher keeps unanswered (1: synchronous publish)." default:"1"`
	Rate        float64       `help:"Open loop: records per second, all publishers together; latency from each request's intended send time (0: closed loop)." default:"0"`
	Warmup      time.Duration `help:"Publish this long, uncounted, before measuring (pub, e2e): a fresh stream's first segment is still being zero-filled." default:"0s"`
}

// spec turns the flags into a workload.Spec.
func (f *benchShape) spec() (workload.Spec, error) {
	s, err := f.benchCommon.spec()
	s.Batch, s.Connections, s.Publishers, s.Subscribers = f.Batch, f.Connections, f.Publishers, f.Subscribers
	s.Inflight, s.Rate, s.Warmup = f.Inflight, f.Rate, f.Warmup
	if err != nil {
		return s, err
	}
	return s.WithDefaults()
}

// spec turns the common flags into a workload.Spec, the rest zero.
func (f *benchCommon) spec() (workload.Spec, error) {
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
	s := workload.Spec{RecordBytes: size, Fsync: mode, Duration: duration, Count: f.Count, BaselineDuration: f.Baseline, IO: io}
	return s, errors.Join(errs...)
}

// durationSet is whether --duration was given with a value other than its
// default; with --count, the default duration does not bound the run.
func (f *benchCommon) durationSet() bool { return f.Duration != 5*time.Second }

// benchTarget is where the broker workloads send. Its TLS flags are the
// client commands' (clientflags.go), without their environment
// variables: with no --addr the embedded broker listens in the clear.
type benchTarget struct {
	Addr    string `help:"A running broker (or a cluster's seed); empty starts one on a temporary directory under --dir." placeholder:"HOST:PORT"`
	Token   string `help:"Token for a broker with authorization on." env:"FELIX_TOKEN"`
	TLS     bool   `name:"tls" help:"Connect to --addr with TLS (the broker's --tls-addr)."`
	TLSCA   string `name:"tls-ca" help:"PEM file of the CA that signed the broker's certificate (default: the system's roots)." type:"existingfile"`
	TLSName string `name:"tls-server-name" help:"Name to verify the broker's certificate against (default: the host of --addr)."`
}

// target is the workload.Target of --addr, with its TLS configuration.
func (t benchTarget) target() (workload.Target, error) {
	wt := workload.Target{Addr: t.Addr, Token: t.Token}
	if !t.TLS && t.TLSCA == "" {
		return wt, nil
	}
	if t.Addr == "" {
		return wt, fmt.Errorf("--tls needs --addr: the embedded broker listens in the clear")
	}
	cfg, err := (&brokerFlags{Addr: t.Addr, TLS: t.TLS, TLSCA: t.TLSCA, TLSName: t.TLSName}).tlsConfig()
	wt.TLS = cfg
	return wt, err
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
