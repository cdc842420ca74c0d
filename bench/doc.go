// Package bench is Felix's measurement library: what `felix bench` and the
// storage engine's `go test -bench` benchmarks use to measure throughput and
// latency and to report them beside the raw limits of the same machine.
//
// # What it is for
//
//   - Recording latency without a lock on the hot path: a Recorder holds one
//     Lane (an HdrHistogram, 1ns..60s, three significant digits) per
//     goroutine; lanes are merged only when the writers have stopped.
//   - Driving a load: Run calls an Op from N workers, closed-loop (latency
//     from the call) or open-loop at a Rate (latency from each call's due
//     time, from a Schedule, so a stall cannot hide the requests queued
//     behind it: no coordinated omission).
//   - Keeping requests in flight: RunPipeline drives a Pipeline (Send,
//     then Await the answers in order) with up to a window of calls
//     outstanding per worker, paced and measured as Run is; an awaiting
//     goroutine per worker owns its lane.
//   - The Result model: a workload, its Params, its figures (records/s,
//     MB/s, p50/p90/p99/p99.9/max) and its Baselines, raw limits measured
//     in the same run with the ratio of every figure to each. Machine says
//     where it ran, down to the data directory's file system.
//   - Output: WriteTable (aligned text for people), WriteJSON and WriteCSV
//     (for machines), WriteReport (one self-contained report.html with
//     inline SVG charts), and a live Progress line on terminals only.
//
// The disk's own limits (fdatasync latency, the group-commit ceiling,
// page-cache bandwidth; bare, and through each ring driver) are measured
// by the subpackage bench/disk.
//
// # What it must never do
//
//   - Report a workload's figure without a baseline beside it: every writer
//     refuses a RoleWorkload result without Baselines (ErrNoBaseline). A
//     figure alone says nothing about the machine it came from.
//   - Compute a percentile by hand (sorting samples, interpolating): every
//     latency figure comes from an HdrHistogram of the served library,
//     github.com/HdrHistogram/hdrhistogram-go.
//   - Drop a sample: values above 60s are clamped and counted (Clamped),
//     negative ones count as zero.
//   - Let a report fetch anything: report.html has no URL, script, link or
//     font reference; it renders offline.
//   - Sleep in a test: timed logic takes a Clock.
//
// # Invariants and ownership
//
//   - A Lane is written by one goroutine only (Record, RecordN, Count);
//     its counters, read by Totals, are atomics on the lane's own cache
//     line. Recorder.Latency and Recorder.Histogram read the histograms and
//     must wait until every writer has stopped (Run does).
//   - Recording and pacing allocate nothing per operation.
//   - A Baseline's Ratios[f] is the result's figure f divided by the
//     baseline's, present only when both are positive: for throughput the
//     share of the raw limit reached, for latency how many times slower.
//   - MB means 10^6 bytes. Latencies are nanoseconds in JSON and CSV.
//   - The JSON document is {"format": "felix-bench/1", "results": [...]};
//     fields and CSV columns are only ever added, never renamed or moved.
//
// There are no locks shared between packages; Progress has one mutex,
// taken by Draw and Stop only.
package bench
