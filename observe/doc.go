// Package observe is what a Felix broker tells its operators: its metrics
// in the Prometheus text format, and the pieces its logging is built from.
//
//   - Registry: a github.com/VictoriaMetrics/metrics Set (cheap counters
//     and fixed-bucket histograms on the hot path) plus, for each metric
//     family, its type and help, written as # HELP and # TYPE lines so the
//     exposition passes promlint. Families whose series come and go (one
//     per consumer group) are written by collectors at scrape time.
//   - LogObserver: a shardlog.Observer feeding the fsync-duration and
//     group-commit histograms and the append counters.
//   - RegisterBroker: every metric of a running broker (docs/operations.md
//     lists them, with what each means and which to alert on).
//   - Throttle: a slog.Handler that lets the first of a run of identical
//     warnings or errors through and folds the rest into a count.
//
// # What it must never do
//
//   - Cost the hot path a lock of its own or an allocation: counters are
//     atomics; histograms are VictoriaMetrics PrometheusHistograms (one
//     short mutex, no allocation); everything else is read from the
//     components' own counters at scrape time.
//   - Let a counter go down: the figures behind a _total are counted as
//     they happen (the observer, netio.Metrics, the managers' counters),
//     never summed over shards that a deleted stream takes away.
//   - Log a line per record, or let one failing disk flood the log.
//
// # Naming
//
// Every family is felix_<subsystem>_<what>[_<unit>][_total]: seconds and
// bytes as base units, _total only on counters, no unit in a label. The
// name felix_broker_replication_lag_records is reserved for the cluster
// layer and not exported by a broker that runs alone.
//
// # Concurrency
//
// A Registry's registration methods and WritePrometheus are safe for
// concurrent use (one mutex, never taken on the hot path). Counters and
// histograms it returns are safe from any goroutine.
package observe
