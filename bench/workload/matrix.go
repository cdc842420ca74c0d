package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine/shardlog"
)

// MatrixSpec is the set of publish shapes `felix bench matrix` runs.
type MatrixSpec struct {
	RecordBytes []int
	Batches     []int
	Fsyncs      []shardlog.FsyncMode
	Publishers  []int
	// Duration is each shape's run, after Warmup; BaselineDuration each
	// raw limit's.
	Duration, Warmup, BaselineDuration time.Duration
	// FsyncDuration is each part of the disk suite run first; 0 skips it.
	FsyncDuration time.Duration
}

// StandardMatrix is the standard set: record sizes 128 B, 1 KiB and
// 4 KiB, batches of 1 and 64, FsyncMode None, Periodic and OnCommit, 1, 16
// and 64 publishers: 54 shapes of 5 seconds, about 8 minutes on 2 cores
// with their baselines (no warm-up unless the caller sets one). quick runs
// the same shapes for a tenth of the time each, about a minute: enough to
// see the shape, not to quote.
func StandardMatrix(quick bool) MatrixSpec {
	m := MatrixSpec{
		RecordBytes: []int{128, 1 << 10, 4 << 10},
		Batches:     []int{1, 64},
		Fsyncs:      []shardlog.FsyncMode{shardlog.None(), shardlog.Periodic(0), shardlog.OnCommit()},
		Publishers:  []int{1, 16, 64},
		Duration:    5 * time.Second, BaselineDuration: 2 * time.Second, FsyncDuration: time.Second,
	}
	if quick {
		m.Duration, m.BaselineDuration, m.FsyncDuration = 500*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond
	}
	return m
}

// Shapes lists the matrix's publish specs, base filled in with each shape,
// in report order (size, batch, fsync, publishers).
func (m MatrixSpec) Shapes(base Spec) []Spec {
	var out []Spec
	for _, size := range m.RecordBytes {
		for _, batch := range m.Batches {
			for _, mode := range m.Fsyncs {
				for _, pubs := range m.Publishers {
					s := base
					s.RecordBytes, s.Batch, s.Fsync, s.Publishers, s.Connections = size, batch, mode, pubs, 0
					s.Duration, s.Warmup, s.BaselineDuration, s.Count = m.Duration, m.Warmup, m.BaselineDuration, 0
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Matrix runs the disk suite in t.DataDir (when set and FsyncDuration is),
// then Pub for every shape against t, baselines shared between shapes of
// the same size, batch and publishers. done, when set, is told of each
// result as it comes. It stops at the first error, returning the results
// so far.
func Matrix(ctx context.Context, t Target, base Spec, m MatrixSpec, done func(bench.Result)) ([]bench.Result, error) {
	var out []bench.Result
	note := func(r bench.Result) {
		out = append(out, r)
		if done != nil {
			done(r)
		}
	}
	if t.DataDir != "" && m.FsyncDuration > 0 {
		s := base
		s.Duration, s.Count, s.RecordBytes = m.FsyncDuration, 0, 0
		rs, err := Fsync(ctx, t.DataDir, s, nil)
		for _, r := range rs {
			note(r)
		}
		if err != nil {
			return out, fmt.Errorf("felix/bench/workload: matrix: fsync: %w", err)
		}
	}
	b := NewBaselines()
	for _, s := range m.Shapes(base) {
		r, err := Pub(ctx, t, s, b)
		if err != nil {
			return out, fmt.Errorf("felix/bench/workload: matrix: %s: %w", s.params(), err)
		}
		note(r)
	}
	return out, nil
}
