package cluster

import "fmt"

// Bounds on what one event may ask for.
const (
	// ShardsMax bounds an object's shards (engine.ShardsMax, the same
	// bound: this package imports nothing of the engine's).
	ShardsMax = 1024
	// ReplicationFactorMax bounds a replica set: past 7 a majority costs
	// more round trips than it buys safety.
	ReplicationFactorMax = 7
	// BrokersMax bounds the brokers the control plane tracks.
	BrokersMax = 1024
)

// ObjectSpec is what placement needs of a stream or a cache.
type ObjectSpec struct {
	ID                ObjectID
	Shards            int
	ReplicationFactor int
	// Incarnation is the store's create revision of the object's key: an
	// object deleted and created again under the same name is another
	// incarnation, and the old one's assignments are not its own.
	Incarnation int64
}

// Check refuses a bad name and counts outside their bounds.
func (s ObjectSpec) Check() error {
	if err := s.ID.Check(); err != nil {
		return err
	}
	if s.Shards < 1 || s.Shards > ShardsMax {
		return fmt.Errorf("%w: %v: shards %d not in 1..%d", ErrInvalidEvent, s.ID, s.Shards, ShardsMax)
	}
	if s.Incarnation <= 0 {
		return fmt.Errorf("%w: %v: incarnation %d: a create revision is positive", ErrInvalidEvent, s.ID, s.Incarnation)
	}
	if s.ReplicationFactor < 1 || s.ReplicationFactor > ReplicationFactorMax {
		return fmt.Errorf("%w: %v: replication factor %d not in 1..%d",
			ErrInvalidEvent, s.ID, s.ReplicationFactor, ReplicationFactorMax)
	}
	return nil
}
