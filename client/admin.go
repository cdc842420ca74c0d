package client

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Consistency is how many brokers hold a record before it is acknowledged.
type Consistency string

// FsyncKind is when the broker syncs what it wrote.
type FsyncKind string

// Delivery is stored and reported, not enforced: how a client reads (a
// subscription, or a consumer group) decides.
type Delivery string

// StreamKind is stored and reported, not enforced: a queue is a way of
// reading a stream, not a kind of stream.
type StreamKind string

// The enumerations' values; "" takes the broker's default.
const (
	ConsistencyLeader Consistency = "Leader" // the shard's leader holds it durably
	ConsistencyQuorum Consistency = "Quorum" // a majority of the replica set does

	FsyncNone     FsyncKind = "None"     // the page cache
	FsyncPeriodic FsyncKind = "Periodic" // synced within Fsync.Interval (the default)
	FsyncOnCommit FsyncKind = "OnCommit" // synced before the acknowledgement

	DeliveryAtMostOnce  Delivery = "AtMostOnce"
	DeliveryAtLeastOnce Delivery = "AtLeastOnce"

	KindStream StreamKind = "Stream"
	KindQueue  StreamKind = "Queue"
	KindCache  StreamKind = "Cache"
)

// Fsync is a stream's FsyncMode: None, Periodic{Interval} or OnCommit.
type Fsync struct {
	Kind     FsyncKind
	Interval time.Duration // with FsyncPeriodic; whole milliseconds
}

// Retention bounds what a stream keeps; zero fields are no bound (or the
// broker's setting).
type Retention struct {
	MaxAge   time.Duration // whole seconds, rounded up
	MaxBytes uint64
}

// StreamConfig is a stream's settings. Zero fields take the broker's
// defaults, and the zero value is the safe choice: a durable stream.
// Delivery and Kind are stored and reported but not enforced.
type StreamConfig struct {
	Shards int
	// InMemory keeps the stream in a bounded in-memory log of the broker:
	// its records are gone after a restart. The default (false) keeps them
	// on the broker's disk, which a broker without a data directory refuses.
	InMemory          bool
	Consistency       Consistency
	ReplicationFactor int
	Retention         Retention
	Fsync             Fsync
	Delivery          Delivery
	Kind              StreamKind
}

// ShardInfo is one shard of a stream as the answering broker knows it.
type ShardInfo struct {
	Shard      int
	LeaderID   string
	LeaderAddr string
	Replicas   []string // broker ids, the leader included
	Generation uint64
	// FirstOffset is the oldest offset retention still holds; NextOffset
	// the one the next record will take.
	FirstOffset int64
	NextOffset  int64
	// Bytes is what the shard's log takes; FirstTime and LastTime the
	// times of its oldest record held and its newest. Zero when the
	// answering broker does not lead the shard (ClusterClient's
	// DescribeStreamShards asks each leader), is older than these
	// fields, or the shard is empty.
	Bytes               int64
	FirstTime, LastTime time.Time
}

// StreamInfo is a stream with its settings and shards.
type StreamInfo struct {
	Stream Stream
	Config StreamConfig
	Shards []ShardInfo
}

func (cfg StreamConfig) wire() (wire.StreamConfig, error) {
	if cfg.Shards < 0 || cfg.Shards > math.MaxUint32 || cfg.ReplicationFactor < 0 || cfg.ReplicationFactor > math.MaxUint32 {
		return wire.StreamConfig{}, &ServerError{Code: codeInvalidArgument, Name: codeInvalidArgument.String(),
			Message: "shards and replication factor must be between 0 and 2^32-1", Local: true}
	}
	return wire.StreamConfig{
		Shards: uint32(cfg.Shards), Durable: !cfg.InMemory,
		Consistency:       wire.Consistency(cfg.Consistency),
		ReplicationFactor: uint32(cfg.ReplicationFactor),
		Retention: wire.Retention{MaxAgeSeconds: ceilSeconds(cfg.Retention.MaxAge),
			MaxSizeBytes: cfg.Retention.MaxBytes},
		Fsync:    wire.FsyncMode{Kind: wire.FsyncKind(cfg.Fsync.Kind), IntervalMillis: uint32(min(cfg.Fsync.Interval.Milliseconds(), math.MaxUint32))},
		Delivery: wire.Delivery(cfg.Delivery), Kind: wire.StreamKind(cfg.Kind),
	}, nil
}

func ceilSeconds(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64((d + time.Second - 1) / time.Second)
}

func configFrom(w wire.StreamConfig) StreamConfig {
	return StreamConfig{
		Shards: int(w.Shards), InMemory: !w.Durable, Consistency: Consistency(w.Consistency),
		ReplicationFactor: int(w.ReplicationFactor),
		Retention: Retention{MaxAge: time.Duration(min(w.Retention.MaxAgeSeconds, math.MaxInt64/uint64(time.Second))) * time.Second,
			MaxBytes: w.Retention.MaxSizeBytes},
		Fsync:    Fsync{Kind: FsyncKind(w.Fsync.Kind), Interval: time.Duration(w.Fsync.IntervalMillis) * time.Millisecond},
		Delivery: Delivery(w.Delivery), Kind: StreamKind(w.Kind),
	}
}

func streamFrom(r wire.StreamRef) Stream {
	return Stream{Tenant: string(r.Tenant), Namespace: string(r.Namespace), Name: string(r.Stream)}
}

func infoFrom(w *wire.StreamInfo) StreamInfo {
	info := StreamInfo{Stream: streamFrom(w.Stream), Config: configFrom(w.Config)}
	for _, sh := range w.Shards {
		info.Shards = append(info.Shards, ShardInfo{Shard: int(sh.Shard), LeaderID: sh.LeaderID, LeaderAddr: sh.LeaderAddr,
			Replicas: sh.Replicas, Generation: sh.Generation, FirstOffset: int64(sh.FirstOffset), NextOffset: int64(sh.NextOffset),
			Bytes: int64(min(sh.Bytes, math.MaxInt64)), FirstTime: timeOf(sh.FirstTime), LastTime: timeOf(sh.LastTime)})
	}
	return info
}

// CreateStream creates a stream (ErrAlreadyExists if it exists).
func (c *Client) CreateStream(ctx context.Context, stream Stream, cfg StreamConfig) (StreamInfo, error) {
	wc, err := cfg.wire()
	if err != nil {
		return StreamInfo{}, err
	}
	var info wire.StreamInfo
	if err := c.roundTrip(ctx, &wire.StreamCreate{Stream: stream.ref(), Config: wc}, &info); err != nil {
		return StreamInfo{}, err
	}
	return infoFrom(&info), nil
}

// DeleteStream deletes a stream (ErrNotFound if there is none). Its
// subscriptions end with ErrNotFound.
func (c *Client) DeleteStream(ctx context.Context, stream Stream) error {
	return c.roundTrip(ctx, &wire.StreamDelete{Stream: stream.ref()}, nil)
}

// DescribeStream returns a stream's settings and shards.
func (c *Client) DescribeStream(ctx context.Context, stream Stream) (StreamInfo, error) {
	var info wire.StreamInfo
	if err := c.roundTrip(ctx, &wire.StreamDescribe{Stream: stream.ref()}, &info); err != nil {
		return StreamInfo{}, err
	}
	return infoFrom(&info), nil
}

// ListStreams lists the streams of a tenant's namespace.
func (c *Client) ListStreams(ctx context.Context, tenant, namespace string) ([]Stream, error) {
	var res wire.StreamListResult
	if err := c.roundTrip(ctx, &wire.StreamList{Tenant: tenant, Namespace: namespace}, &res); err != nil {
		return nil, err
	}
	out := make([]Stream, 0, len(res.Streams))
	for _, r := range res.Streams {
		out = append(out, streamFrom(r))
	}
	return out, nil
}

// roundTrip sends a control request and decodes its answer into answer,
// or expects OK when answer is nil.
func (c *Client) roundTrip(ctx context.Context, req wire.Control, answer wire.Control) error {
	cn, err := c.conn(ctx)
	if err != nil {
		return err
	}
	cl := newCall(false)
	if err := cn.control(ctx, req, cl); err != nil {
		return err
	}
	f := wire.Frame{Type: cl.ftype, Body: cl.body}
	if answer == nil {
		var ok wire.OK
		if err := ok.Decode(f, cn.readLimits); err != nil {
			return fmt.Errorf("%w: answer to %v: %w", ErrProtocol, req.FrameType(), err)
		}
		return nil
	}
	if err := wire.DecodeControl(f, cn.readLimits, answer); err != nil {
		return fmt.Errorf("%w: answer to %v: %w", ErrProtocol, req.FrameType(), err)
	}
	return nil
}
