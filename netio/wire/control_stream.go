package wire

// Consistency is how many brokers hold a record before it is acknowledged.
type Consistency string

const (
	ConsistencyLeader Consistency = "Leader" // the shard's leader, durably
	ConsistencyQuorum Consistency = "Quorum" // a majority of the replica set, leader included
)

// FsyncKind is when the broker syncs what it wrote.
type FsyncKind string

const (
	FsyncNone     FsyncKind = "None"
	FsyncPeriodic FsyncKind = "Periodic" // every FsyncMode.IntervalMillis; the default
	FsyncOnCommit FsyncKind = "OnCommit" // before the acknowledgement
)

// FsyncMode is None, Periodic{interval} or OnCommit:
// {"mode": "Periodic", "interval_ms": 1000}.
type FsyncMode struct {
	Kind           FsyncKind `json:"mode,omitempty"`
	IntervalMillis uint32    `json:"interval_ms,omitempty"`
}

// Delivery is stored and reported, not enforced: how a client reads decides.
type Delivery string

const (
	DeliveryAtMostOnce  Delivery = "AtMostOnce"
	DeliveryAtLeastOnce Delivery = "AtLeastOnce"
)

// StreamKind is stored and reported, not enforced: a queue is a way of
// reading a stream, not a kind of stream.
type StreamKind string

const (
	KindStream StreamKind = "Stream"
	KindQueue  StreamKind = "Queue"
	KindCache  StreamKind = "Cache"
)

// Retention is stored and reported; the broker-wide settings decide.
// Zero means no bound.
type Retention struct {
	MaxAgeSeconds uint64 `json:"max_age_seconds,omitempty"`
	MaxSizeBytes  uint64 `json:"max_size_bytes,omitempty"`
}

// StreamConfig is a stream's settings. Empty enumerations and zero numbers
// take the broker's defaults.
type StreamConfig struct {
	Shards            uint32      `json:"shards,omitempty"`
	Durable           bool        `json:"durable"`
	Consistency       Consistency `json:"consistency,omitempty"`
	ReplicationFactor uint32      `json:"replication_factor,omitempty"`
	Retention         Retention   `json:"retention"`
	Fsync             FsyncMode   `json:"fsync"`
	Delivery          Delivery    `json:"delivery,omitempty"`
	Kind              StreamKind  `json:"kind,omitempty"`
}

func (c StreamConfig) check() error {
	return firstErr(
		checkEnum("consistency", c.Consistency, ConsistencyLeader, ConsistencyQuorum),
		checkEnum("fsync.mode", c.Fsync.Kind, FsyncNone, FsyncPeriodic, FsyncOnCommit),
		checkEnum("delivery", c.Delivery, DeliveryAtMostOnce, DeliveryAtLeastOnce),
		checkEnum("kind", c.Kind, KindStream, KindQueue, KindCache),
	)
}

// StreamCreate creates a stream; the answer is STREAM_INFO, or ERROR
// already_exists.
type StreamCreate struct {
	Stream StreamRef    `json:"stream"`
	Config StreamConfig `json:"config"`
}

// StreamDelete deletes a stream; the answer is OK.
type StreamDelete struct {
	Stream StreamRef `json:"stream"`
}

// StreamDescribe asks for a stream's settings and shards; the answer is
// STREAM_INFO.
type StreamDescribe struct {
	Stream StreamRef `json:"stream"`
}

// ShardInfo is one shard of a stream as the answering broker knows it.
type ShardInfo struct {
	Shard      uint32   `json:"shard"`
	LeaderID   string   `json:"leader_id,omitempty"`
	LeaderAddr string   `json:"leader_addr,omitempty"`
	Replicas   []string `json:"replicas,omitempty"` // broker ids, leader included
	Generation uint64   `json:"generation"`
	// FirstOffset is the oldest offset retention still holds; NextOffset
	// the one the next record will take.
	FirstOffset uint64 `json:"first_offset"`
	NextOffset  uint64 `json:"next_offset"`
	// Bytes is what the shard's log takes, and FirstTime and LastTime
	// (unix ns) the times of its oldest record held and its newest, as
	// its leader holds them; 0 when unknown (a shard another broker
	// leads, an older broker) or empty. Added later in version 1.
	Bytes     uint64 `json:"bytes,omitempty"`
	FirstTime int64  `json:"first_time,omitempty"`
	LastTime  int64  `json:"last_time,omitempty"`
}

// StreamInfo answers STREAM_CREATE and STREAM_DESCRIBE.
type StreamInfo struct {
	Stream StreamRef    `json:"stream"`
	Config StreamConfig `json:"config"`
	Shards []ShardInfo  `json:"shards"`
}

// StreamList lists a namespace's streams; the answer is STREAM_LIST_RESULT.
type StreamList struct {
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
}

// StreamListResult answers STREAM_LIST.
type StreamListResult struct {
	Streams []StreamRef `json:"streams"`
}

func (*StreamCreate) FrameType() Type     { return TypeStreamCreate }
func (*StreamDelete) FrameType() Type     { return TypeStreamDelete }
func (*StreamDescribe) FrameType() Type   { return TypeStreamDescribe }
func (*StreamInfo) FrameType() Type       { return TypeStreamInfo }
func (*StreamList) FrameType() Type       { return TypeStreamList }
func (*StreamListResult) FrameType() Type { return TypeStreamListResult }

func (m *StreamCreate) check(l Limits) error {
	return firstErr(l.CheckStreamRef(m.Stream), m.Config.check())
}
func (m *StreamDelete) check(l Limits) error   { return l.CheckStreamRef(m.Stream) }
func (m *StreamDescribe) check(l Limits) error { return l.CheckStreamRef(m.Stream) }
func (m *StreamInfo) check(l Limits) error {
	return firstErr(l.CheckStreamRef(m.Stream), m.Config.check())
}
func (m *StreamList) check(l Limits) error {
	return firstErr(l.checkNameString(m.Tenant), l.checkNameString(m.Namespace))
}
func (m *StreamListResult) check(l Limits) error {
	for _, s := range m.Streams {
		if err := l.CheckStreamRef(s); err != nil {
			return err
		}
	}
	return nil
}
