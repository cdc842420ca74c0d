package disk

import (
	"context"

	"github.com/felixbroker/felix/bench"
)

// measure runs op under load with a fresh recorder, a progress line when
// the hook asks for one, and turns what it saw into a Result.
func measure(ctx context.Context, name string, role bench.Role, p bench.Params, dir string,
	load bench.Load, hook bench.ProgressHook, op bench.Op) (bench.Result, error) {
	rec := bench.NewRecorder(load.Workers)
	if hook != nil {
		stop := hook(name, rec)
		defer stop()
	}
	m, err := bench.Run(ctx, load, rec, op)
	if err != nil {
		return bench.Result{}, err
	}
	r := bench.NewResult(name, role, p, m)
	machine := bench.DescribeMachine(dir)
	r.Machine = &machine
	return r, nil
}

// roleOf makes the bare path a baseline and a driver a workload, to be set
// beside the bare figures.
func roleOf(s syncer) bench.Role {
	if s.path() == PathRaw {
		return bench.RoleBaseline
	}
	return bench.RoleWorkload
}
