package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Role says whether a result is a raw limit or something measured against one.
type Role string

// The two roles.
const (
	// RoleWorkload is Felix doing work; it is reported only beside at least
	// one baseline measured in the same run.
	RoleWorkload Role = "workload"
	// RoleBaseline is a raw limit of the machine (a bare fdatasync loop,
	// page-cache bandwidth): the yardstick, its own reference.
	RoleBaseline Role = "baseline"
)

// Params are the knobs a workload ran with. Zero fields are not reported.
type Params struct {
	RecordBytes int     `json:"record_bytes,omitempty"`
	Batch       int     `json:"batch,omitempty"`
	Connections int     `json:"connections,omitempty"`
	Publishers  int     `json:"publishers,omitempty"`
	Subscribers int     `json:"subscribers,omitempty"`
	Writers     int     `json:"writers,omitempty"`
	Fsync       string  `json:"fsync,omitempty"`   // none, periodic, oncommit
	IOPath      string  `json:"io_path,omitempty"` // raw, io_uring, portable
	Rate        float64 `json:"rate,omitempty"`    // open-loop records/s; 0 closed loop
	// Extra holds workload-specific knobs, reported sorted by key.
	Extra map[string]string `json:"extra,omitempty"`
}

// String renders the set fields as "size=1024 batch=1 writers=64 ...".
func (p Params) String() string {
	var parts []string
	add := func(k string, v int) {
		if v != 0 {
			parts = append(parts, k+"="+strconv.Itoa(v))
		}
	}
	add("size", p.RecordBytes)
	add("batch", p.Batch)
	add("conns", p.Connections)
	add("pubs", p.Publishers)
	add("subs", p.Subscribers)
	add("writers", p.Writers)
	if p.Fsync != "" {
		parts = append(parts, "fsync="+p.Fsync)
	}
	if p.IOPath != "" {
		parts = append(parts, "io="+p.IOPath)
	}
	if p.Rate != 0 {
		parts = append(parts, "rate="+strconv.FormatFloat(p.Rate, 'f', -1, 64))
	}
	for _, k := range slices.Sorted(maps.Keys(p.Extra)) {
		parts = append(parts, k+"="+p.Extra[k])
	}
	return strings.Join(parts, " ")
}

// Result is one measured workload (or baseline) and its figures.
type Result struct {
	Workload      string        `json:"workload"`
	Role          Role          `json:"role"`
	Params        Params        `json:"params"`
	Started       time.Time     `json:"started"`
	Duration      time.Duration `json:"duration_ns"`
	Records       int64         `json:"records"`
	Bytes         int64         `json:"bytes"`
	RecordsPerSec float64       `json:"records_per_s"`
	MBPerSec      float64       `json:"mb_per_s"` // 10^6 bytes per second
	Latency       *Latency      `json:"latency,omitempty"`
	// Baselines are raw limits measured in the same run, each with the
	// ratio of every figure of this result to it.
	Baselines []Baseline `json:"baselines,omitempty"`
	// Machine is where it ran, the data directory's disk included.
	Machine *Machine `json:"machine,omitempty"`
}

// NewResult computes the rates of m. Latency is kept when m has samples.
func NewResult(workload string, role Role, p Params, m Measurement) Result {
	r := Result{
		Workload: workload,
		Role:     role,
		Params:   p,
		Started:  m.Started,
		Duration: m.Elapsed,
		Records:  m.Records,
		Bytes:    m.Bytes,
	}
	if secs := m.Elapsed.Seconds(); secs > 0 {
		r.RecordsPerSec = float64(m.Records) / secs
		r.MBPerSec = float64(m.Bytes) / secs / 1e6
	}
	if m.Latency.Count > 0 {
		l := m.Latency
		r.Latency = &l
	}
	return r
}

// Baseline is a raw limit beside a result: its figures, and the ratio of
// the result's figure to each of them (Ratios[f] = result f / baseline f).
// For throughput a ratio of 0.8 means 80% of the raw limit reached; for
// latency 1.3 means 30% slower than the raw limit.
type Baseline struct {
	Name          string             `json:"name"`
	Workload      string             `json:"workload"`
	Params        Params             `json:"params"`
	RecordsPerSec float64            `json:"records_per_s"`
	MBPerSec      float64            `json:"mb_per_s"`
	Latency       *Latency           `json:"latency,omitempty"`
	Ratios        map[Figure]float64 `json:"ratios"`
}

// AddBaseline sets base beside r under name and computes the ratios of
// every figure both have.
func (r *Result) AddBaseline(name string, base Result) {
	b := Baseline{
		Name:          name,
		Workload:      base.Workload,
		Params:        base.Params,
		RecordsPerSec: base.RecordsPerSec,
		MBPerSec:      base.MBPerSec,
		Latency:       base.Latency,
		Ratios:        map[Figure]float64{},
	}
	for _, f := range Figures {
		if ratio, ok := Ratio(r.Figure(f), base.Figure(f)); ok {
			b.Ratios[f] = ratio
		}
	}
	r.Baselines = append(r.Baselines, b)
}

// Ratio returns v/base when both are positive and finite.
func Ratio(v, base float64) (float64, bool) {
	if !(v > 0) || !(base > 0) || math.IsInf(v, 0) || math.IsInf(base, 0) {
		return 0, false
	}
	return v / base, true
}

// Validate reports why r cannot be reported, wrapping ErrNoBaseline or
// ErrInvalidResult; nil when it can.
func (r *Result) Validate() error {
	switch {
	case r.Workload == "":
		return fmt.Errorf("%w: no workload name", ErrInvalidResult)
	case r.Role != RoleWorkload && r.Role != RoleBaseline:
		return fmt.Errorf("%w: %s: role %q", ErrInvalidResult, r.Workload, r.Role)
	case r.Records < 0 || r.Bytes < 0 || r.Duration < 0:
		return fmt.Errorf("%w: %s: negative figures", ErrInvalidResult, r.Workload)
	case r.Role == RoleWorkload && len(r.Baselines) == 0:
		return fmt.Errorf("%w: %s", ErrNoBaseline, r.Workload)
	}
	for _, b := range r.Baselines {
		if b.Name == "" {
			return fmt.Errorf("%w: %s: baseline without a name", ErrInvalidResult, r.Workload)
		}
	}
	return nil
}

// ValidateAll validates every result; the first error wins.
func ValidateAll(results []Result) error {
	for i := range results {
		if err := results[i].Validate(); err != nil {
			return err
		}
	}
	return nil
}
