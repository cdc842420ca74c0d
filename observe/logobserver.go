package observe

import (
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// LogObserver counts what the shard logs' committers do: it implements
// shardlog.Observer. Its methods run on committer and background-sync
// goroutines; each is a few atomic adds and at most two histogram updates.
type LogObserver struct {
	flushes       *metrics.Counter
	records       *metrics.Counter
	bytes         *metrics.Counter
	fsyncs        *metrics.Counter
	fsyncErrors   *metrics.Counter
	fsyncSeconds  *metrics.PrometheusHistogram
	flushRecords  *metrics.PrometheusHistogram
	flushedSynced *metrics.Counter
}

// NewLogObserver registers the log families in r and returns the observer
// to hand to engine.Options.Observer.
func NewLogObserver(r *Registry) *LogObserver {
	return &LogObserver{
		flushes: r.Counter("felix_log_flushes_total",
			"Writes of a whole group-commit buffer by a shard log's committer."),
		records: r.Counter("felix_log_appended_records_total",
			"Records written to shard logs (counted when their flush is written)."),
		bytes: r.Counter("felix_log_appended_bytes_total",
			"Bytes of framed records written to shard logs."),
		fsyncs: r.Counter("felix_log_fsyncs_total",
			"fdatasync calls of shard logs: one per OnCommit flush, one per Periodic interval or sync-ahead."),
		fsyncErrors: r.Counter("felix_log_fsync_errors_total",
			"fdatasync calls that failed. Each poisons its log until the broker restarts."),
		fsyncSeconds: r.Histogram("felix_log_fsync_duration_seconds",
			"Time of each fdatasync of a shard log (under OnCommit, the write linked to it included).", fsyncSecondsBuckets),
		flushRecords: r.Histogram("felix_log_group_commit_records",
			"Records per group-commit flush: how many appends one write (and, under OnCommit, one fdatasync) served.", batchRecordsBuckets),
		flushedSynced: r.Counter("felix_log_synced_flushes_total",
			"Flushes made durable by their own fdatasync (OnCommit)."),
	}
}

// Flushed is told of each buffer the committer wrote; synced says it was
// written with its fdatasync (OnCommit), took covers both.
func (o *LogObserver) Flushed(records, bytes int, synced bool, took time.Duration) {
	o.flushes.Inc()
	o.records.Add(records)
	o.bytes.Add(bytes)
	o.flushRecords.Update(float64(records))
	if synced {
		o.flushedSynced.Inc()
		o.fsyncs.Inc()
		o.fsyncSeconds.Update(took.Seconds())
	}
}

// Synced is told of each fdatasync the background loop made (Periodic,
// sync-ahead, Sync).
func (o *LogObserver) Synced(took time.Duration, err error) {
	o.fsyncs.Inc()
	if err != nil {
		o.fsyncErrors.Inc()
		return
	}
	o.fsyncSeconds.Update(took.Seconds())
}
