package observe

// Bucket upper bounds. Frozen once dashboards use them: changing a bound
// breaks every query that names it.
var (
	// fsyncSecondsBuckets spans a fast NVMe flush (tens of us) to the
	// stalls of a busy disk (seconds).
	fsyncSecondsBuckets = []float64{0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01,
		0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5}
	// ackSecondsBuckets spans a page-cache ack on loopback (us) to a
	// publish stuck behind a stalled flush.
	ackSecondsBuckets = []float64{0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
		0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	// batchRecordsBuckets are powers of two up to a full 4 MiB buffer of
	// 64-byte records.
	batchRecordsBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096,
		8192, 16384, 65536}
)
