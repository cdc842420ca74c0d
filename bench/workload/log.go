package workload

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// Log measures the storage engine alone, in this process: s.Publishers
// workers append batches of s.Batch records of s.RecordBytes to one shard
// log in a fresh directory under dir, at s.Fsync, each keeping s.Inflight
// appends unacknowledged; latency runs from an append to its
// acknowledgement at the log's durability. Beside it: the disk's limit for
// s.Fsync in the same directory (the group-commit ceiling under OnCommit,
// the page cache's bandwidth otherwise). A RoleWorkload named "log".
func Log(ctx context.Context, dir string, s Spec, b *Baselines) (bench.Result, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	l, driver, cleanup, err := openLog(dir, "log", s)
	if err != nil {
		return bench.Result{}, err
	}
	defer cleanup()
	p := newAppendPipe(l, s)
	rec := bench.NewRecorder(s.Publishers)
	stop := progress(s, "log", rec)
	m, err := bench.RunPipeline(ctx, s.load(s.Publishers), s.Inflight, rec, p)
	stop()
	if err != nil {
		return bench.Result{}, err
	}
	params := s.params()
	params.Writers, params.Publishers, params.Connections = s.Publishers, 0, 0
	params.IOPath = string(driver.Kind())
	r := bench.NewResult("log", bench.RoleWorkload, params, m)
	machine := bench.DescribeMachine(dir)
	r.Machine = &machine
	name, base, err := diskBaseline(ctx, b, dir, s, s.Publishers*s.Inflight)
	if err != nil {
		return bench.Result{}, err
	}
	r.AddBaseline(name, base)
	return r, nil
}

// openLog opens a shard log in a fresh directory under dir through a ring
// driver of s.IO; cleanup closes both and removes the directory.
func openLog(dir, kind string, s Spec) (*shardlog.Log, ring.Driver, func(), error) {
	d, err := ring.Open(ring.Config{Mode: s.IO})
	if err != nil {
		return nil, nil, nil, err
	}
	logDir, err := os.MkdirTemp(dir, "felix-bench-"+kind+"-")
	if err != nil {
		d.Close()
		return nil, nil, nil, fmt.Errorf("felix/bench/workload: %w", err)
	}
	l, err := shardlog.Open(shardlog.Options{FS: vfs.NewOS(d), Dir: logDir, Fsync: s.Fsync, PrepareSegments: true})
	if err != nil {
		d.Close()
		os.RemoveAll(logDir)
		return nil, nil, nil, err
	}
	cleanup := func() {
		l.Close()
		d.Close()
		os.RemoveAll(logDir)
	}
	return l, d, cleanup, nil
}

// appendPipe appends one worker's batches; each worker has a ring of
// Inflight waiters, used in turn (a worker's appends are acknowledged in
// order, so the oldest is free again when its turn comes).
type appendPipe struct {
	log            *shardlog.Log
	batches        [][]shardlog.Entry
	waiters        [][]chanWaiter
	next           []int
	records, bytes int64
}

type chanWaiter chan error

func (w chanWaiter) Committed(_, _ int64, err error) { w <- err }

func newAppendPipe(l *shardlog.Log, s Spec) *appendPipe {
	p := &appendPipe{log: l, next: make([]int, s.Publishers), records: int64(s.Batch), bytes: int64(s.Batch * s.RecordBytes)}
	for range s.Publishers {
		batch := make([]shardlog.Entry, s.Batch)
		for i := range batch {
			batch[i].Value = pattern(s.RecordBytes)
		}
		ws := make([]chanWaiter, s.Inflight)
		for i := range ws {
			ws[i] = make(chanWaiter, 1)
		}
		p.batches, p.waiters = append(p.batches, batch), append(p.waiters, ws)
	}
	return p
}

func (p *appendPipe) Send(w int, _ time.Time) (any, error) {
	ws := p.waiters[w]
	waiter := ws[p.next[w]]
	p.next[w] = (p.next[w] + 1) % len(ws)
	if _, err := p.log.Append(p.batches[w], 1, waiter); err != nil {
		return nil, err
	}
	return waiter, nil
}

func (p *appendPipe) Await(_ int, pending any) (int64, int64, error) {
	if err := <-pending.(chanWaiter); err != nil {
		return 0, 0, err
	}
	return p.records, p.bytes, nil
}
