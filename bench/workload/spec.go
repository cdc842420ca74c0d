package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/units"
)

// ErrSpec marks a Spec a workload refuses before it touches anything.
var ErrSpec = errors.New("felix/bench/workload: invalid spec")

// Limits on a Spec, checked before anything is allocated.
const (
	RecordBytesMax = 1 << 20 // one record; a batch must also fit a 4 MiB frame
	BatchMax       = 4096
	WorkersMax     = 1024 // publishers, subscribers, connections each
	InflightMax    = 4096
	batchBytesMax  = 4<<20 - 64<<10 // a batch must fit the default frame, with room for headers
)

// Spec is what every workload takes. Zero fields take the defaults of
// WithDefaults; a workload reads only the fields that concern it.
type Spec struct {
	RecordBytes int // value bytes per record
	Batch       int // records per publish request or append
	Connections int // client connections; publishers share them round robin
	Publishers  int // concurrent publishing (or appending, writing) workers
	Subscribers int // concurrent subscribers (e2e)
	// Inflight is how many requests each publisher keeps unanswered: 1 is
	// a synchronous publish, more is asynchronous pipelining.
	Inflight int
	Fsync    shardlog.FsyncMode
	// Duration and Count bound the run; Count is in records, all workers
	// together. At least one is set (WithDefaults sets Duration).
	Duration time.Duration
	Count    int64
	// Rate, when positive, makes the run open-loop at Rate records per
	// second, all workers together; latency is then measured from each
	// request's intended send time.
	Rate float64
	// Warmup, when positive, publishes for this long into the workload's
	// stream before the measurement starts, uncounted: a fresh stream's
	// first segment is still being zero-filled in the background, which a
	// short run would otherwise measure as its whole tail.
	Warmup time.Duration
	// BaselineDuration bounds each raw-limit measurement; default
	// min(Duration, 2s).
	BaselineDuration time.Duration
	// IO is the ring driver in-process workloads use.
	IO ring.Mode
	// Progress draws a live line per measurement; nil for none.
	Progress bench.ProgressHook
}

// Defaults for zero Spec fields.
const (
	DefaultRecordBytes      = 1024
	DefaultDuration         = 5 * time.Second
	baselineDurationDefault = 2 * time.Second
)

// WithDefaults fills the zero fields and checks the rest.
func (s Spec) WithDefaults() (Spec, error) {
	s.RecordBytes = orInt(s.RecordBytes, DefaultRecordBytes)
	s.Batch = orInt(s.Batch, 1)
	s.Publishers = orInt(s.Publishers, 1)
	s.Connections = orInt(s.Connections, s.Publishers)
	s.Subscribers = orInt(s.Subscribers, 1)
	s.Inflight = orInt(s.Inflight, 1)
	if s.Duration == 0 && s.Count == 0 {
		s.Duration = DefaultDuration
	}
	if s.BaselineDuration == 0 {
		s.BaselineDuration = baselineDurationDefault
		if s.Duration > 0 {
			s.BaselineDuration = min(s.Duration, baselineDurationDefault)
		}
	}
	return s, s.check()
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func (s Spec) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrSpec}, args...)...)
	}
	switch {
	case s.RecordBytes < 8 || s.RecordBytes > RecordBytesMax:
		return bad("record size %d bytes, want 8..%d (8: the e2e timestamp)", s.RecordBytes, RecordBytesMax)
	case s.Batch < 1 || s.Batch > BatchMax:
		return bad("batch %d, want 1..%d", s.Batch, BatchMax)
	case s.Batch*s.RecordBytes > batchBytesMax:
		return bad("a batch of %d x %d bytes does not fit one 4 MiB frame", s.Batch, s.RecordBytes)
	case s.Publishers < 1 || s.Publishers > WorkersMax || s.Subscribers < 1 || s.Subscribers > WorkersMax:
		return bad("%d publishers, %d subscribers, want 1..%d each", s.Publishers, s.Subscribers, WorkersMax)
	case s.Connections < 1 || s.Connections > s.Publishers:
		return bad("%d connections for %d publishers, want 1..publishers", s.Connections, s.Publishers)
	case s.Inflight < 1 || s.Inflight > InflightMax:
		return bad("in flight %d, want 1..%d", s.Inflight, InflightMax)
	case s.Duration < 0 || s.Count < 0 || s.BaselineDuration < 0 || s.Warmup < 0:
		return bad("negative duration or count")
	case s.Rate < 0:
		return bad("negative rate")
	}
	return nil
}

// load is the bench.Load for workers sending batches of s.Batch records:
// Count and Rate are in records, the load in calls.
func (s Spec) load(workers int) bench.Load {
	l := bench.Load{Workers: workers, Duration: s.Duration}
	if s.Count > 0 {
		l.Ops = max(1, s.Count/int64(s.Batch))
	}
	if s.Rate > 0 {
		l.Rate = s.Rate / float64(s.Batch)
	}
	return l
}

// params are the bench.Params reported for s.
func (s Spec) params() bench.Params {
	p := bench.Params{RecordBytes: s.RecordBytes, Batch: s.Batch, Publishers: s.Publishers,
		Connections: s.Connections, Fsync: FsyncName(s.Fsync), Rate: s.Rate,
		Extra: map[string]string{"inflight": strconv.Itoa(s.Inflight)}}
	if s.Warmup > 0 {
		p.Extra["warmup"] = s.Warmup.String()
	}
	return p
}

// warmup publishes through p for s.Warmup, closed loop, uncounted.
func warmup(ctx context.Context, s Spec, p bench.Pipeline) error {
	if s.Warmup <= 0 {
		return nil
	}
	l := bench.Load{Workers: s.Publishers, Duration: s.Warmup}
	_, err := bench.RunPipeline(ctx, l, s.Inflight, nil, p)
	return err
}

// FsyncName is the short name of a mode in reports: none, periodic,
// oncommit.
func FsyncName(m shardlog.FsyncMode) string {
	switch m.Kind {
	case shardlog.FsyncNone:
		return "none"
	case shardlog.FsyncOnCommit:
		return "oncommit"
	}
	return "periodic"
}

// ParseSize reads a byte count as every felix command does (units.ParseBytes):
// "128", "1KiB", "4k", "1MiB", "1m".
func ParseSize(s string) (int, error) {
	n, err := units.ParseBytes(s)
	if err != nil || n > math.MaxInt32 {
		return 0, fmt.Errorf("%w: size %q (write 128, 1KiB, 4k)", ErrSpec, s)
	}
	return int(n), nil
}

// ParseList reads a comma-separated list with parse: "128,1KiB,4KiB".
func ParseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		v, err := parse(part)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty list %q", ErrSpec, s)
	}
	return out, nil
}

// ParseInt reads a positive count.
func ParseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: count %q, want a positive integer", ErrSpec, s)
	}
	return n, nil
}

// ParseFsync reads a FsyncMode as shardlog.ParseFsyncMode does.
func ParseFsync(s string) (shardlog.FsyncMode, error) {
	m, err := shardlog.ParseFsyncMode(s)
	if err != nil {
		return m, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	return m, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
