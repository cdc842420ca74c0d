package wire

// HEARTBEAT and LEASE_GRANT, laid out in replicate.go. Both carry a list;
// the writers append it item by item and patch the count at Finish, and
// Decode fills a caller's slice, so a steady heartbeat allocates nothing.

// HeartbeatReport is what a broker reports of one log it holds.
type HeartbeatReport struct {
	Log        LogRef
	Generation uint64
	Leading    bool
	LogEnd     int64
	LastGen    uint64
	Durable    int64
	// LeaderHeard: for a follower, ns since it last heard its leader (< 0
	// never); for a leader, ns since a quorum of its followers last
	// answered it.
	LeaderHeard int64
}

// heartbeatReportMinBytes is a report with empty names.
const heartbeatReportMinBytes = logRefMinBytes + 8 + 1 + 8 + 8 + 8 + 8

// Heartbeat is a HEARTBEAT's fields; names alias the frame.
type Heartbeat struct {
	Seq     uint64
	Broker  []byte
	DiskID  []byte
	Reports []HeartbeatReport
}

// ListWriter completes a frame whose list the caller appends item by item.
type ListWriter struct {
	start, countAt int
	n              uint32
}

// BeginHeartbeat appends a HEARTBEAT's header; add reports with Report,
// then Finish.
func BeginHeartbeat(dst []byte, requestID, seq uint64, broker, diskID []byte) ([]byte, ListWriter) {
	dst, start := beginFrame(dst, TypeHeartbeat, 0, requestID)
	dst = appendU64(dst, seq)
	dst = appendName(dst, broker)
	dst = appendName(dst, diskID)
	at := len(dst)
	return appendU32(dst, 0), ListWriter{start: start, countAt: at}
}

// Report appends one report.
func (w *ListWriter) Report(dst []byte, r HeartbeatReport) []byte {
	w.n++
	dst = appendLogRef(dst, r.Log)
	dst = appendU64(dst, r.Generation)
	dst = appendBool(dst, r.Leading)
	dst = appendI64(dst, r.LogEnd)
	dst = appendU64(dst, r.LastGen)
	dst = appendI64(dst, r.Durable)
	return appendI64(dst, r.LeaderHeard)
}

// Granted appends one granted log of a LEASE_GRANT.
func (w *ListWriter) Granted(dst []byte, g GrantedLog) []byte {
	w.n++
	dst = appendLogRef(dst, g.Log)
	return appendU64(dst, g.Generation)
}

// Finish patches the count and the frame's length.
func (w *ListWriter) Finish(dst []byte) []byte {
	putU32(dst, w.countAt, w.n)
	return endFrame(dst, w.start)
}

// Decode reads a HEARTBEAT frame, its reports into h.Reports[:0].
func (h *Heartbeat) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeHeartbeat); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	h.Seq = c.u64()
	h.Broker = c.name(lim.nameBytes())
	h.DiskID = c.name(lim.nameBytes())
	if c.err == nil && (len(h.Broker) == 0 || len(h.DiskID) == 0) {
		c.fail(errEmptyBrokerID)
	}
	n := c.count(1<<20, heartbeatReportMinBytes, true)
	h.Reports = h.Reports[:0]
	for range n {
		r := HeartbeatReport{Log: c.logRef(lim.nameBytes()), Generation: c.u64(), Leading: c.bool8()}
		r.LogEnd, r.LastGen, r.Durable, r.LeaderHeard = c.i64(), c.u64(), c.i64(), c.i64()
		if c.err == nil && (r.LogEnd < 0 || r.Durable < 0) {
			c.fail(errNegativeOffset)
		}
		h.Reports = append(h.Reports, r)
	}
	return c.finish()
}

// GrantedLog is one log a LEASE_GRANT grants, at its generation.
type GrantedLog struct {
	Log        LogRef
	Generation uint64
}

// LeaseGrant is a LEASE_GRANT's fields; names alias the frame.
type LeaseGrant struct {
	HeartbeatSeq uint64
	Epoch        int64
	LeaseNanos   int64
	Logs         []GrantedLog
}

// BeginLeaseGrant appends a LEASE_GRANT's header; add logs with Granted,
// then Finish.
func BeginLeaseGrant(dst []byte, requestID, heartbeatSeq uint64, epoch, leaseNanos int64) ([]byte, ListWriter) {
	dst, start := beginFrame(dst, TypeLeaseGrant, 0, requestID)
	dst = appendU64(dst, heartbeatSeq)
	dst = appendI64(dst, epoch)
	dst = appendI64(dst, leaseNanos)
	at := len(dst)
	return appendU32(dst, 0), ListWriter{start: start, countAt: at}
}

var errBadLease = malformed("a lease that is not positive")

// Decode reads a LEASE_GRANT frame, its logs into g.Logs[:0].
func (g *LeaseGrant) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeLeaseGrant); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	g.HeartbeatSeq = c.u64()
	g.Epoch = c.i64()
	g.LeaseNanos = c.i64()
	if c.err == nil && g.LeaseNanos <= 0 {
		c.fail(errBadLease)
	}
	n := c.count(1<<20, logRefMinBytes+8, true)
	g.Logs = g.Logs[:0]
	for range n {
		g.Logs = append(g.Logs, GrantedLog{Log: c.logRef(lim.nameBytes()), Generation: c.u64()})
	}
	return c.finish()
}

// AppendHeartbeat appends a whole HEARTBEAT.
func AppendHeartbeat(dst []byte, requestID uint64, h Heartbeat) []byte {
	dst, w := BeginHeartbeat(dst, requestID, h.Seq, h.Broker, h.DiskID)
	for _, r := range h.Reports {
		dst = w.Report(dst, r)
	}
	return w.Finish(dst)
}

// AppendLeaseGrant appends a whole LEASE_GRANT.
func AppendLeaseGrant(dst []byte, requestID uint64, g LeaseGrant) []byte {
	dst, w := BeginLeaseGrant(dst, requestID, g.HeartbeatSeq, g.Epoch, g.LeaseNanos)
	for _, l := range g.Logs {
		dst = w.Granted(dst, l)
	}
	return w.Finish(dst)
}
