package disk

import (
	"context"
	"fmt"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/ring"
)

// Suite is every disk measurement of `felix bench fsync`: each bare, then
// through each driver with the bare figures set beside it as the baseline
// named "raw". Options with neither a count nor a duration skip their part.
type Suite struct {
	Dir       string // on the disk under test
	Sync      SyncOptions
	Group     GroupOptions
	PageCache PageCacheOptions
	// GroupWriters, when set, runs the group commit once per writer count
	// (o.Writers is ignored).
	GroupWriters []int
	// Files lists the file kinds the sync and group-commit loops run on;
	// default both, Growing then Prezeroed. The options' File is ignored.
	Files   []File
	Drivers []ring.Driver
	// Progress, when set, replaces the options' own hooks.
	Progress bench.ProgressHook
}

// RunSuite runs s in order: fdatasync per file kind, group commit per
// writer count and file kind, then page-cache bandwidth, rewriting cached
// pages (PageCache), appending new ones (PageAppend) and appending new
// ones kept until the end (PageKept). It stops at the first error and
// returns the results so far with it.
func RunSuite(ctx context.Context, s Suite) ([]bench.Result, error) {
	var out []bench.Result
	files := s.Files
	if len(files) == 0 {
		files = []File{Growing, Prezeroed}
	}
	if s.Sync.Count > 0 || s.Sync.Duration > 0 {
		for _, f := range files {
			o := s.Sync
			o.File, o.Progress = f, s.hook(o.Progress)
			rs, err := s.compare(func(d ring.Driver) (bench.Result, error) { return syncLoop(ctx, s.Dir, o, d) })
			if out = append(out, rs...); err != nil {
				return out, err
			}
		}
	}
	if s.Group.Records > 0 || s.Group.Duration > 0 {
		writers := s.GroupWriters
		if len(writers) == 0 {
			writers = []int{s.Group.Writers}
		}
		for _, n := range writers {
			for _, f := range files {
				o := s.Group
				o.Writers, o.File, o.Progress = n, f, s.hook(o.Progress)
				rs, err := s.compare(func(d ring.Driver) (bench.Result, error) { return groupLoop(ctx, s.Dir, o, d) })
				if out = append(out, rs...); err != nil {
					return out, err
				}
			}
		}
	}
	if s.PageCache.TotalBytes > 0 || s.PageCache.Duration > 0 {
		o := s.PageCache
		o.Progress = s.hook(o.Progress)
		for _, measure := range []func(context.Context, string, PageCacheOptions) (bench.Result, error){PageCache, PageAppend, PageKept} {
			r, err := measure(ctx, s.Dir, o)
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func (s Suite) hook(own bench.ProgressHook) bench.ProgressHook {
	if s.Progress != nil {
		return s.Progress
	}
	return own
}

// compare measures bare (d == nil), then through each driver with the bare
// result as its baseline.
func (s Suite) compare(measure func(ring.Driver) (bench.Result, error)) ([]bench.Result, error) {
	raw, err := measure(nil)
	if err != nil {
		return nil, err
	}
	out := []bench.Result{raw}
	for _, d := range s.Drivers {
		r, err := measure(d)
		if err != nil {
			return out, fmt.Errorf("felix/bench/disk: through %s: %w", d.Kind(), err)
		}
		r.AddBaseline(PathRaw, raw)
		out = append(out, r)
	}
	return out, nil
}
