package wire

// Replication frames (family 0x07) are peer frames: brokers exchange them
// over the peer transport (cluster/peer), never a client. A shard's leader
// ships its log to the followers with REPLICATE; the control plane fences
// replicas with FENCE before it promotes one; a follower that diverged asks
// its leader where its log ends for a generation with GENERATION_END; a
// broker heartbeats the control plane with HEARTBEAT and is answered with
// LEASE_GRANT. cluster/replica and cluster/failover give them meaning;
// docs/replication.md describes the protocol.
//
// Every frame names its log with a LogRef:
//
//	u8 kind | u8 len tenant | u8 len namespace | u8 len name | u32 shard |
//	u8 len part
//
// kind is the object's (1 stream, 2 cache), part names which of the
// shard's logs ("" the records; a group's cursor log, a dead-letter log
// are named by their owners). Generations are u64 on the wire; a log
// holds u32 ones, and a generation above that is refused where it is used.
//
//	REPLICATE (0x0700) leader -> follower
//	+---------+------------+-----------+-----------+-----------+---------+
//	| LogRef  | u64 gen    | i64 first | u64 prev  | i64 commit| records |
//	|         | (leader's) | offset    | gen       |           | (rest)  |
//	+---------+------------+-----------+-----------+-----------+---------+
//
// records are whole framed records (the segment format, as Log.Read
// returns them) at offsets first, first+1, ..., all of generation gen
// except that a catch-up batch may carry older generations (each record's
// frame holds its own); it may be empty: a probe, or a commit update.
// commit is the leader's commit watermark (what it has acknowledged).
//
//	REPLICATE_ACK (0x0701) follower -> leader
//	u8 status | u64 fence gen | i64 log end | u64 last gen | i64 durable
//
// status: 0 appended (durable covers it at the follower's FsyncMode); 1
// mismatch (the batch does not continue the log: gap, overlap or
// divergence; log end and last gen say where it ends, so the leader
// resends from there); 2 fenced (gen is below fence gen: the follower
// follows a newer generation); 3 unknown (the follower holds no such log).
//
//	FENCE (0x0702) control plane -> replica
//	LogRef | u64 gen | i64 epoch
//	FENCE_OK (0x0703) replica -> control plane, after the fence is durable
//	u64 gen | i64 epoch | i64 log end | u64 last gen | i64 durable |
//	u8 flags (0x01 new disk, 0x02 clean) | u8 len disk id
//
//	GENERATION_END (0x0704) follower -> leader
//	LogRef | u64 leader gen | u64 asked gen
//	GENERATION_END_OK (0x0705)
//	u64 leader gen | i64 end (one past the last record of generation <= asked)
//
//	GENERATION_END with leader gen 0 asks any replica (not only a leader)
//	where its own log ends: a new leader of a shard's secondary part asks its
//	followers so before it leads the part (docs/replication.md, "A shard's
//	parts").
//
//	HEARTBEAT (0x0706) broker -> control plane
//	u64 seq | u8 len broker | u8 len disk id | u32 count | count x Report
//	Report: LogRef | u64 gen | u8 leading | i64 log end | u64 last gen |
//	        i64 durable | i64 leader heard (ns ago; < 0 never)
//	LEASE_GRANT (0x0707) control plane -> broker
//	u64 heartbeat seq | i64 epoch | i64 lease (ns) | u32 count |
//	count x (LogRef | u64 gen)
//
//	LOG_READ (0x0708) new leader of a part -> a replica of it
//	LogRef | i64 from | u32 max bytes
//	answered with a REPLICATE of the replica's own records from `from`
//	(gen: its fence generation; prev gen: its record's at from-1; commit
//	0), which the asker appends at those offsets: the tail a new leader of
//	a secondary part lacks and a follower holds.

// LogRef names one log of one shard.
type LogRef struct {
	Kind      uint8
	Tenant    []byte
	Namespace []byte
	Name      []byte
	Shard     uint32
	Part      []byte
}

// logRefMinBytes is a LogRef with empty names.
const logRefMinBytes = 1 + 1 + 1 + 1 + 4 + 1

func appendLogRef(b []byte, r LogRef) []byte {
	b = append(b, r.Kind)
	b = appendName(appendName(appendName(b, r.Tenant), r.Namespace), r.Name)
	b = appendU32(b, r.Shard)
	return appendName(b, r.Part)
}

var errEmptyLogName = malformed("a log reference with an empty name")

func (c *cursor) logRef(maxBytes int) LogRef {
	r := LogRef{Kind: c.u8()}
	r.Tenant, r.Namespace, r.Name = c.name(maxBytes), c.name(maxBytes), c.name(maxBytes)
	r.Shard = c.u32()
	r.Part = c.name(maxBytes)
	if c.err == nil && (r.Kind == 0 || len(r.Tenant) == 0 || len(r.Namespace) == 0 || len(r.Name) == 0) {
		c.fail(errEmptyLogName)
	}
	return r
}

// String is "kind/tenant/namespace/name/shard[/part]", for logs.
func (r LogRef) String() string {
	s := string(rune('0'+r.Kind)) + "/" + string(r.Tenant) + "/" + string(r.Namespace) + "/" + string(r.Name) + "/" + utoa(uint64(r.Shard))
	if len(r.Part) > 0 {
		s += "/" + string(r.Part)
	}
	return s
}

// Replicate is a REPLICATE's fields; Log's names and Records alias the
// frame.
type Replicate struct {
	Log        LogRef
	Generation uint64
	First      int64
	PrevGen    uint64
	Commit     int64
	Records    []byte
}

// BeginReplicate appends a REPLICATE's header and fields; the caller
// appends the framed records and calls Finish.
func BeginReplicate(dst []byte, requestID uint64, m Replicate) ([]byte, ForwardWriter) {
	dst, start := beginFrame(dst, TypeReplicate, 0, requestID)
	dst = appendLogRef(dst, m.Log)
	dst = appendU64(dst, m.Generation)
	dst = appendI64(dst, m.First)
	dst = appendU64(dst, m.PrevGen)
	dst = appendI64(dst, m.Commit)
	return dst, ForwardWriter{start: start}
}

// AppendReplicate appends a whole REPLICATE carrying m.Records.
func AppendReplicate(dst []byte, requestID uint64, m Replicate) []byte {
	dst, w := BeginReplicate(dst, requestID, m)
	return w.Finish(append(dst, m.Records...))
}

var errNegativeOffset = malformed("a negative offset")

// Decode reads a REPLICATE frame. The records are not walked here: the
// follower checks each record's frame as it appends them.
func (m *Replicate) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeReplicate); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Log = c.logRef(lim.nameBytes())
	m.Generation = c.u64()
	m.First = c.i64()
	m.PrevGen = c.u64()
	m.Commit = c.i64()
	if c.err == nil && (m.First < 0 || m.Commit < 0) {
		c.fail(errNegativeOffset)
	}
	if c.err != nil {
		return c.err
	}
	m.Records = nil
	if len(c.b) > 0 {
		m.Records = c.b
	}
	return nil
}

// ReplicateStatus is what a follower did with a REPLICATE.
type ReplicateStatus uint8

// The statuses of a REPLICATE_ACK.
const (
	ReplicateAppended ReplicateStatus = iota
	ReplicateMismatch
	ReplicateFenced
	ReplicateUnknown
	replicateStatusCount
)

// ReplicateAck is a REPLICATE_ACK's fields.
type ReplicateAck struct {
	Status   ReplicateStatus
	FenceGen uint64
	LogEnd   int64
	LastGen  uint64
	Durable  int64
}

// AppendReplicateAck appends a REPLICATE_ACK frame.
func AppendReplicateAck(dst []byte, requestID uint64, a ReplicateAck) []byte {
	dst, start := beginFrame(dst, TypeReplicateAck, 0, requestID)
	dst = append(dst, byte(a.Status))
	dst = appendU64(dst, a.FenceGen)
	dst = appendI64(dst, a.LogEnd)
	dst = appendU64(dst, a.LastGen)
	dst = appendI64(dst, a.Durable)
	return endFrame(dst, start)
}

// Decode reads a REPLICATE_ACK frame.
func (a *ReplicateAck) Decode(f Frame, _ Limits) error {
	if err := expectType(f, TypeReplicateAck); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	a.Status = ReplicateStatus(c.u8())
	a.FenceGen = c.u64()
	a.LogEnd = c.i64()
	a.LastGen = c.u64()
	a.Durable = c.i64()
	if c.err == nil && a.Status >= replicateStatusCount {
		c.fail(errBadEnum)
	}
	if c.err == nil && (a.LogEnd < 0 || a.Durable < 0) {
		c.fail(errNegativeOffset)
	}
	return c.finish()
}
