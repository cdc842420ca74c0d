package netio

import (
	"math"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// engineConfig turns a STREAM_CREATE config into the engine's. Zero fields
// stay zero: the engine fills its defaults and checks the enumerations.
func engineConfig(c wire.StreamConfig) (engine.StreamConfig, error) {
	if c.Retention.MaxAgeSeconds > uint64(math.MaxInt64/int64(time.Second)) {
		return engine.StreamConfig{}, fieldError("retention.max_age_seconds", "too large")
	}
	if c.Retention.MaxSizeBytes > math.MaxInt64 {
		return engine.StreamConfig{}, fieldError("retention.max_size_bytes", "too large")
	}
	out := engine.StreamConfig{
		Shards:            int(c.Shards),
		Durable:           c.Durable,
		Consistency:       engine.Consistency(c.Consistency),
		ReplicationFactor: int(c.ReplicationFactor),
		Delivery:          engine.Delivery(c.Delivery),
		Kind:              engine.Kind(c.Kind),
		Fsync: engine.FsyncSetting{Kind: string(c.Fsync.Kind),
			Interval: time.Duration(c.Fsync.IntervalMillis) * time.Millisecond},
	}
	out.Retention.MaxAge = time.Duration(c.Retention.MaxAgeSeconds) * time.Second
	out.Retention.MaxBytes = int64(c.Retention.MaxSizeBytes)
	return out, nil
}

// wireConfig is the reverse, for STREAM_INFO.
func wireConfig(c engine.StreamConfig) wire.StreamConfig {
	return wire.StreamConfig{
		Shards:            uint32(c.Shards),
		Durable:           c.Durable,
		Consistency:       wire.Consistency(c.Consistency),
		ReplicationFactor: uint32(c.ReplicationFactor),
		Retention: wire.Retention{MaxAgeSeconds: uint64(c.Retention.MaxAge / time.Second),
			MaxSizeBytes: uint64(max(c.Retention.MaxBytes, 0))},
		Fsync: wire.FsyncMode{Kind: wire.FsyncKind(c.Fsync.Kind),
			IntervalMillis: uint32(min(c.Fsync.Interval.Milliseconds(), math.MaxUint32))},
		Delivery: wire.Delivery(c.Delivery),
		Kind:     wire.StreamKind(c.Kind),
	}
}

// streamInfo describes a stream and each shard's offsets as this broker
// holds them. A shard another broker holds is described by its leader
// (its offsets are the leader's to say: 0 and 0 here), so a client knows
// where to ask, and so is a shard this broker leads whose end it cannot
// say yet (a leadership whose generation start has not committed:
// ReadReady); in a cluster every shard's generation and replicas are the
// store's assignment (the View's).
func (s *Server) streamInfo(st *engine.Stream) *wire.StreamInfo {
	info := st.Info()
	out := &wire.StreamInfo{Stream: wireRef(info.ID), Config: wireConfig(info.Config)}
	for i := range st.Shards() {
		si := wire.ShardInfo{Shard: uint32(i), Generation: uint64(info.Generation)}
		sh, err := st.Shard(i)
		ready := err == nil && sh.ReadReady() == nil
		if ready {
			si.FirstOffset, si.NextOffset = uint64(sh.Start()), uint64(sh.End())
		}
		if local, leader := s.cfg.Owner.Leader(info.ID, i); local && err == nil {
			si.LeaderID, si.LeaderAddr, si.Replicas = s.cfg.BrokerID, s.advAddr, []string{s.cfg.BrokerID}
			if ready {
				addUsage(&si, sh)
			}
		} else {
			si.LeaderAddr = leader
			si.LeaderID = s.leaderBroker(info.ID, i)
		}
		if p, ok := s.cfg.Owner.(shardReplicas); ok {
			if gen, replicas, ok := p.ShardReplicas(info.ID, i); ok {
				si.Generation, si.Replicas = gen, replicas
			}
		}
		out.Shards = append(out.Shards, si)
	}
	return out
}

// addUsage adds what a shard this broker leads holds: its bytes and record
// times, read from its log (Shard.Usage reads the disk: off a loop). A
// failure leaves them out; the describe goes on.
func addUsage(si *wire.ShardInfo, sh *engine.Shard) {
	if u, err := sh.Usage(); err == nil {
		si.Bytes, si.FirstTime, si.LastTime = uint64(max(u.Bytes, 0)), u.FirstTime, u.LastTime
	}
}

// shardReplicas is what a cluster's Owner (its View) says of a shard's
// assignment: the generation and the replicas' broker ids, leader first.
type shardReplicas interface {
	ShardReplicas(id engine.StreamID, shard int) (generation uint64, replicas []string, ok bool)
}

// leaderBroker is the id of the broker leading a shard this one does not,
// as the forwarder's Router knows it ("" when unknown or not in a cluster).
func (s *Server) leaderBroker(id engine.StreamID, shard int) string {
	if s.cfg.Forwarder == nil {
		return ""
	}
	b, _ := s.cfg.Forwarder.cfg.Router.LeaderBroker(id, shard)
	return b
}

func wireRef(id engine.StreamID) wire.StreamRef {
	return wire.StreamRef{Tenant: []byte(id.Tenant), Namespace: []byte(id.Namespace), Stream: []byte(id.Name)}
}

func idOf(ref wire.StreamRef) engine.StreamID {
	return engine.StreamID{Tenant: string(ref.Tenant), Namespace: string(ref.Namespace), Name: string(ref.Stream)}
}

func fieldError(field, msg string) *wire.Error {
	return &wire.Error{Code: wire.CodeInvalidArgument, Message: field + ": " + msg, Details: wire.Details{Field: field}}
}
