package engine

import (
	"fmt"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
)

// Consistency is how many brokers hold a record before it is acknowledged.
type Consistency string

// Delivery and Kind are stored and reported; the contract says how a client
// reads decides, not these fields.
type (
	Delivery string
	Kind     string
)

// The enumerations' values, as they appear in the catalog and on the wire.
const (
	ConsistencyLeader Consistency = "Leader"
	ConsistencyQuorum Consistency = "Quorum"

	DeliveryAtMostOnce  Delivery = "AtMostOnce"
	DeliveryAtLeastOnce Delivery = "AtLeastOnce"

	KindStream Kind = "Stream"
	KindQueue  Kind = "Queue"
	KindCache  Kind = "Cache"
)

// ShardsMax bounds the shards of one stream.
const ShardsMax = 1024

// ReplicationFactorMax bounds a stream's replicas (cluster.ReplicationFactorMax,
// the same bound: past 7 a majority costs more round trips than it buys).
const ReplicationFactorMax = 7

// StreamConfig is a stream's settings. Unlike the contract, which only has
// broker-wide retention, Retention here is enforced per stream (zero
// fields fall back to the broker's defaults).
type StreamConfig struct {
	Shards            int                `json:"shards"`
	Durable           bool               `json:"durable"`
	Consistency       Consistency        `json:"consistency"`
	ReplicationFactor int                `json:"replication_factor"`
	Retention         shardlog.Retention `json:"retention"`
	Fsync             FsyncSetting       `json:"fsync"`
	Delivery          Delivery           `json:"delivery"`
	Kind              Kind               `json:"kind"`
}

// FsyncSetting is a stream's FsyncMode; Kind "" means the broker default.
type FsyncSetting struct {
	Kind     string        `json:"kind,omitempty"` // "None", "Periodic", "OnCommit"
	Interval time.Duration `json:"interval,omitempty"`
}

// Mode resolves the setting against the broker default.
func (f FsyncSetting) Mode(def shardlog.FsyncMode) (shardlog.FsyncMode, error) {
	switch f.Kind {
	case "":
		return def, nil
	case "None":
		return shardlog.None(), nil
	case "OnCommit":
		return shardlog.OnCommit(), nil
	case "Periodic":
		return shardlog.Periodic(f.Interval), nil
	}
	return shardlog.FsyncMode{}, fmt.Errorf("%w: fsync mode %q (None, Periodic, OnCommit)", ErrInvalidConfig, f.Kind)
}

// withDefaults fills zero fields and checks the rest.
func (c StreamConfig) withDefaults() (StreamConfig, error) {
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.Consistency == "" {
		c.Consistency = ConsistencyLeader
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = 1
	}
	if c.Delivery == "" {
		c.Delivery = DeliveryAtMostOnce
	}
	if c.Kind == "" {
		c.Kind = KindStream
	}
	return c, c.check()
}

func (c StreamConfig) check() error {
	switch {
	case c.Shards < 1 || c.Shards > ShardsMax:
		return fmt.Errorf("%w: shards %d not in 1..%d", ErrInvalidConfig, c.Shards, ShardsMax)
	case c.Consistency != ConsistencyLeader && c.Consistency != ConsistencyQuorum:
		return fmt.Errorf("%w: consistency %q (Leader, Quorum)", ErrInvalidConfig, c.Consistency)
	case c.ReplicationFactor < 1 || c.ReplicationFactor > ReplicationFactorMax:
		return fmt.Errorf("%w: replication factor %d not in 1..%d", ErrInvalidConfig, c.ReplicationFactor, ReplicationFactorMax)
	case c.Delivery != DeliveryAtMostOnce && c.Delivery != DeliveryAtLeastOnce:
		return fmt.Errorf("%w: delivery %q (AtMostOnce, AtLeastOnce)", ErrInvalidConfig, c.Delivery)
	case c.Kind != KindStream && c.Kind != KindQueue && c.Kind != KindCache:
		return fmt.Errorf("%w: kind %q (Stream, Queue, Cache)", ErrInvalidConfig, c.Kind)
	case c.Retention.MaxAge < 0 || c.Retention.MaxBytes < 0:
		return fmt.Errorf("%w: negative retention", ErrInvalidConfig)
	}
	_, err := c.Fsync.Mode(shardlog.Periodic(0))
	return err
}
