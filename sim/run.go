package sim

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine/shardlog"
)

// Result is what one run found.
type Result struct {
	Config  Config
	Hash    uint64         // the event trace's hash
	Lines   int            // the trace's length
	Reports []check.Report // by shard
	// CacheReports are the caches' (by cache): their linearizability
	// checks, values and counters.
	CacheReports []check.Report
	Stats        Stats
	// Violations are the anomalies the shards' contracts forbid, one line
	// each; empty: the run kept every promise.
	Violations []string
	// Tolerated counts the anomalies a shard's contract allows (a Leader or
	// Periodic shard's losses), by kind.
	Tolerated map[string]int
	excerpt   string
}

// Failed reports whether the run broke a promise.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

// Report is a failed run's account: its seed, its reports, the trace
// around the first violation and the command that replays it.
func (r *Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v\ntrace hash %016x over %d events\n", r.Config, r.Hash, r.Lines)
	for i, rep := range r.Reports {
		fmt.Fprintf(&b, "shard %d (%v): %s\n", i, r.Config.Shards[i], rep.String())
	}
	for k, rep := range r.CacheReports {
		fmt.Fprintf(&b, "cache c%d (%v): %s\n", k, r.Config.Caches[k], rep.String())
	}
	fmt.Fprintf(&b, "violations:\n  %s\ntrace around it:\n%s\nreplay: FELIX_SIM_SEED=%d go test ./sim -run TestSimulation -v\n",
		strings.Join(r.Violations, "\n  "), r.excerpt, r.Config.Seed)
	return b.String()
}

// lossTolerated are the kinds a shard that may lose acknowledged records
// (Leader, or Periodic under power cuts) shows for such a loss.
var lossTolerated = map[check.Kind]bool{check.LostWrite: true, check.Unseen: true, check.InconsistentOffsets: true,
	check.PollSkip: true, check.RolledBackRead: true}

// Run runs cfg in a synctest bubble of its own and judges it.
func Run(t *testing.T, cfg Config) *Result { return runWith(t, cfg, nil) }

// runWith is Run, calling after (when set) with the world once it ran.
func runWith(t *testing.T, cfg Config, after func(*World)) *Result {
	res := &Result{Config: cfg, Tolerated: map[string]int{}}
	synctest.Test(t, func(t *testing.T) {
		w, err := newWorld(cfg)
		if err != nil {
			t.Fatalf("seed %d: %v", cfg.Seed, err)
		}
		w.run()
		res.Hash, res.Lines, res.Stats = w.trace.Hash(), w.trace.count, w.stats
		needle := ""
		for i, rec := range w.rec {
			rep := check.Check(rec.History(), check.Options{})
			res.Reports = append(res.Reports, rep)
			for k, n := range rep.Counts {
				kind := check.Kind(k)
				if n == 0 {
					continue
				}
				if !cfg.Shards[i].Lossless() && lossTolerated[kind] {
					res.Tolerated[shardClass(cfg.Shards[i])+" "+kind.String()] += n
					continue
				}
				ex := rep.Examples[k][0]
				res.Violations = append(res.Violations, fmt.Sprintf("shard %d (%v): %s %d: %s", i, cfg.Shards[i], kind, n, ex.What))
				if needle == "" && len(ex.Ops) > 0 {
					needle = fmt.Sprintf("op s%d/%d ", i, ex.Ops[len(ex.Ops)-1].ID)
				}
			}
		}
		if n := judgeCaches(w, res); needle == "" {
			needle = n
		}
		res.excerpt = w.trace.excerpt(needle, 20)
		if after != nil {
			after(w)
		}
	})
	return res
}

// judgeCaches checks each cache's history: a Quorum OnCommit cache's
// anomalies are violations, another's tolerated (the checker has no model
// of what a Leader or Periodic cache may lose). It returns the trace tag
// of the first violation's last operation ("" when none).
func judgeCaches(w *World, res *Result) string {
	needle := ""
	for k, rec := range w.cacheRec {
		cfg := w.cfg.Caches[k]
		rep := check.Check(rec.History(), check.Options{})
		res.CacheReports = append(res.CacheReports, rep)
		for kind, n := range rep.Counts {
			if n == 0 {
				continue
			}
			if !cfg.Lossless() {
				res.Tolerated[cfg.class()+" "+check.Kind(kind).String()] += n
				continue
			}
			ex := rep.Examples[kind][0]
			res.Violations = append(res.Violations, fmt.Sprintf("cache c%d (%v): %s %d: %s", k, cfg, check.Kind(kind), n, ex.What))
			if needle == "" && len(ex.Ops) > 0 {
				needle = fmt.Sprintf("cop c%d/%d ", k, ex.Ops[len(ex.Ops)-1].ID)
			}
		}
	}
	return needle
}

// shardClass is a shard's consistency and fsync kind, without the
// interval.
func shardClass(s ShardConfig) string {
	c := "leader"
	if s.Consistency == replica.ConsistencyQuorum {
		c = "quorum"
	}
	if s.Fsync.Kind == shardlog.FsyncPeriodic {
		return c + "/periodic"
	}
	return c + "/on_commit"
}

func kindName(k int) string { return check.Kind(k).String() }
