package cluster

import (
	"cmp"
	"fmt"
	"strings"
)

// Kind says what an object is. Streams and caches are sharded and placed
// alike, and their shards share the brokers' leader and replica counts.
type Kind uint8

// The kinds of object the control plane places.
const (
	KindStream Kind = iota + 1
	KindCache
)

func (k Kind) String() string {
	switch k {
	case KindStream:
		return "stream"
	case KindCache:
		return "cache"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// nameBytesMax bounds each part of an object's name, as the engine does
// (engine.NameBytesMax, the same bound).
const nameBytesMax = 255

// ObjectID names a stream or a cache: its kind and (tenant, namespace,
// name).
type ObjectID struct {
	Kind      Kind
	Tenant    string
	Namespace string
	Name      string
}

// String is "kind/tenant/namespace/name".
func (id ObjectID) String() string {
	return id.Kind.String() + "/" + id.Tenant + "/" + id.Namespace + "/" + id.Name
}

// Check refuses an unknown kind and a part that is empty, longer than
// nameBytesMax or holds a '/' (String and the store's keys use it).
func (id ObjectID) Check() error {
	if id.Kind != KindStream && id.Kind != KindCache {
		return fmt.Errorf("%w: %v", ErrInvalidEvent, id.Kind)
	}
	for _, part := range []string{id.Tenant, id.Namespace, id.Name} {
		if part == "" || len(part) > nameBytesMax || strings.Contains(part, "/") {
			return fmt.Errorf("%w: object name %q", ErrInvalidEvent, id.String())
		}
	}
	return nil
}

func compareObjects(a, b ObjectID) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Tenant, b.Tenant),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// ShardID names one shard of an object.
type ShardID struct {
	Object ObjectID
	Shard  int
}

// String is "kind/tenant/namespace/name/shard".
func (id ShardID) String() string { return fmt.Sprintf("%v/%d", id.Object, id.Shard) }

func compareShards(a, b ShardID) int {
	return cmp.Or(compareObjects(a.Object, b.Object), cmp.Compare(a.Shard, b.Shard))
}

// Replica is one broker's copy of a shard: the broker and the disk it was
// placed on. A broker that comes back with another disk id holds none of
// the data, so it is another replica; never the old one.
type Replica struct {
	Broker string
	DiskID string
}

// String is "broker@disk", or "none" for the zero Replica (no leader).
func (r Replica) String() string {
	if r == (Replica{}) {
		return "none"
	}
	return r.Broker + "@" + r.DiskID
}

// Broker is a broker's registration: what it stores under its lease.
type Broker struct {
	ID         string
	ClientAddr string
	PeerAddr   string
	Rack       string // empty: no label; unlabelled brokers count as one rack
	DiskID     string // random, written in the data directory at its creation
}

// Replica is the replica this broker, on its current disk, would hold.
func (b Broker) Replica() Replica { return Replica{Broker: b.ID, DiskID: b.DiskID} }

// Check refuses a registration without an id or a disk id.
func (b Broker) Check() error {
	if b.ID == "" || b.DiskID == "" {
		return fmt.Errorf("%w: broker %q on disk %q: both are required", ErrInvalidEvent, b.ID, b.DiskID)
	}
	return nil
}
