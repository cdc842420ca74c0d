package control

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// The values of format 1, as JSON. Fields may be added within the format
// (a reader ignores the fields it does not know); none may be removed or
// change its meaning without a new Root. testdata/*.json holds one of
// each, byte for byte.

// brokerJSON is a broker's registration, under brokers/<id>.
type brokerJSON struct {
	ID         string `json:"id"`
	ClientAddr string `json:"client_addr"`
	PeerAddr   string `json:"peer_addr"`
	Rack       string `json:"rack,omitempty"`
	DiskID     string `json:"disk_id"`
}

// entryJSON is a catalog entry: exactly one of Stream and Cache, the one
// its key's kind names.
type entryJSON struct {
	Stream  *engine.StreamConfig `json:"stream,omitempty"`
	Cache   *cache.Config        `json:"cache,omitempty"`
	Created time.Time            `json:"created"`
}

type replicaJSON struct {
	Broker string `json:"broker"`
	DiskID string `json:"disk_id"`
}

// assignmentJSON is a shard's assignment; Leader is absent while none
// leads.
type assignmentJSON struct {
	Replicas    []replicaJSON `json:"replicas"`
	Leader      *replicaJSON  `json:"leader,omitempty"`
	Generation  uint64        `json:"generation"`
	Incarnation int64         `json:"incarnation"`
	Epoch       int64         `json:"epoch"`
	Joins       []joinJSON    `json:"joins,omitempty"`
}

// joinJSON is a replica that joined the set after placement, at a
// generation (cluster.Join).
type joinJSON struct {
	Broker     string `json:"broker"`
	DiskID     string `json:"disk_id"`
	Generation uint64 `json:"generation"`
}

// unplacedJSON says why an incarnation of an object is not placed.
type unplacedJSON struct {
	Needed      int   `json:"needed"`
	Live        int   `json:"live"`
	Incarnation int64 `json:"incarnation"`
	Epoch       int64 `json:"epoch"`
}

// Entry is a stream's or a cache's catalog entry: what it was created
// with. Exactly one of Stream and Cache is set, as Object.Kind says.
type Entry struct {
	Object  cluster.ObjectID
	Stream  *engine.StreamConfig
	Cache   *cache.Config
	Created time.Time
	// Incarnation is the catalog key's create revision (not in the value):
	// an object deleted and created again is another incarnation.
	Incarnation int64
}

// clone copies the config, so the copy shares nothing.
func (e Entry) clone() Entry {
	if e.Stream != nil {
		cfg := *e.Stream
		e.Stream = &cfg
	}
	if e.Cache != nil {
		cfg := *e.Cache
		e.Cache = &cfg
	}
	return e
}

// Spec is what placement needs of the entry.
func (e Entry) Spec() cluster.ObjectSpec {
	spec := cluster.ObjectSpec{ID: e.Object, Incarnation: e.Incarnation}
	switch {
	case e.Stream != nil:
		spec.Shards, spec.ReplicationFactor = e.Stream.Shards, e.Stream.ReplicationFactor
	case e.Cache != nil:
		spec.Shards, spec.ReplicationFactor = e.Cache.Shards, e.Cache.ReplicationFactor
	}
	return spec
}

// ShardAssignment is a shard's assignment as stored.
type ShardAssignment struct {
	Shard      cluster.ShardID
	Assignment cluster.Assignment
	Epoch      int64 // of the control plane that wrote it
	Revision   int64 // the key's modification revision
}

// UnplacedReport is the control plane's word that an object's
// incarnation is not placed, and why.
type UnplacedReport struct {
	Object      cluster.ObjectID
	Needed      int // brokers its replication factor needs
	Live        int // brokers live when it was decided
	Incarnation int64
	Epoch       int64
}

// Err is the report as an error matching cluster.ErrTooFewBrokers.
func (u UnplacedReport) Err() error {
	return cluster.Unplaced{Object: u.Object, Needed: u.Needed, Live: u.Live}.Err()
}

func encodeBroker(b cluster.Broker) []byte {
	return mustMarshal(brokerJSON{ID: b.ID, ClientAddr: b.ClientAddr, PeerAddr: b.PeerAddr, Rack: b.Rack, DiskID: b.DiskID})
}

// decodeBroker reads a registration; its id must be its key's.
func decodeBroker(id string, value []byte) (cluster.Broker, error) {
	var j brokerJSON
	if err := json.Unmarshal(value, &j); err != nil {
		return cluster.Broker{}, fmt.Errorf("%w: broker %q: %v", ErrMalformed, id, err)
	}
	b := cluster.Broker{ID: j.ID, ClientAddr: j.ClientAddr, PeerAddr: j.PeerAddr, Rack: j.Rack, DiskID: j.DiskID}
	if b.ID != id {
		return cluster.Broker{}, fmt.Errorf("%w: broker key %q holds broker %q", ErrMalformed, id, b.ID)
	}
	if err := b.Check(); err != nil {
		return cluster.Broker{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return b, nil
}

func encodeEntry(e Entry) []byte {
	return mustMarshal(entryJSON{Stream: e.Stream, Cache: e.Cache, Created: e.Created.UTC()})
}

// decodeEntry reads a catalog entry stored under id's key at kv.
func decodeEntry(id cluster.ObjectID, kv store.KV) (Entry, error) {
	var j entryJSON
	if err := json.Unmarshal(kv.Value, &j); err != nil {
		return Entry{}, fmt.Errorf("%w: catalog entry of %v: %v", ErrMalformed, id, err)
	}
	e := Entry{Object: id, Stream: j.Stream, Cache: j.Cache, Created: j.Created, Incarnation: kv.CreateRevision}
	stream, isCache := id.Kind == cluster.KindStream, id.Kind == cluster.KindCache
	if (e.Stream != nil) != stream || (e.Cache != nil) != isCache {
		return Entry{}, fmt.Errorf("%w: catalog entry of %v holds another kind's config", ErrMalformed, id)
	}
	if err := e.Spec().Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return e, nil
}

func encodeAssignment(a cluster.Assignment, epoch int64) []byte {
	j := assignmentJSON{Replicas: make([]replicaJSON, len(a.Replicas)), Generation: a.Generation,
		Incarnation: a.Incarnation, Epoch: epoch}
	for i, r := range a.Replicas {
		j.Replicas[i] = replicaJSON(r)
	}
	if a.Leader != (cluster.Replica{}) {
		j.Leader = &replicaJSON{Broker: a.Leader.Broker, DiskID: a.Leader.DiskID}
	}
	for _, jn := range a.Joins {
		j.Joins = append(j.Joins, joinJSON{Broker: jn.Replica.Broker, DiskID: jn.Replica.DiskID, Generation: jn.Generation})
	}
	return mustMarshal(j)
}

// decodeAssignment reads a shard's assignment stored at kv.
func decodeAssignment(id cluster.ShardID, kv store.KV) (ShardAssignment, error) {
	var j assignmentJSON
	if err := json.Unmarshal(kv.Value, &j); err != nil {
		return ShardAssignment{}, fmt.Errorf("%w: assignment of %v: %v", ErrMalformed, id, err)
	}
	a := cluster.Assignment{Replicas: make([]cluster.Replica, len(j.Replicas)), Generation: j.Generation,
		Incarnation: j.Incarnation}
	for i, r := range j.Replicas {
		a.Replicas[i] = cluster.Replica(r)
	}
	if j.Leader != nil {
		a.Leader = cluster.Replica(*j.Leader)
	}
	for _, jn := range j.Joins {
		a.Joins = append(a.Joins, cluster.Join{Replica: cluster.Replica{Broker: jn.Broker, DiskID: jn.DiskID}, Generation: jn.Generation})
	}
	if err := checkAssignment(a); err != nil {
		return ShardAssignment{}, fmt.Errorf("%w: assignment of %v: %v", ErrMalformed, id, err)
	}
	return ShardAssignment{Shard: id, Assignment: a, Epoch: j.Epoch, Revision: kv.ModRevision}, nil
}

// checkAssignment refuses what the control plane never writes.
func checkAssignment(a cluster.Assignment) error {
	switch {
	case a.Generation == 0 || a.Incarnation <= 0:
		return fmt.Errorf("generation %d, incarnation %d: both are positive", a.Generation, a.Incarnation)
	case len(a.Replicas) == 0 || len(a.Replicas) > cluster.ReplicationFactorMax:
		return fmt.Errorf("%d replicas (1 to %d)", len(a.Replicas), cluster.ReplicationFactorMax)
	case a.Leader != (cluster.Replica{}) && !a.Holds(a.Leader):
		return fmt.Errorf("leader %v is not a replica", a.Leader)
	}
	for _, r := range a.Replicas {
		if r.Broker == "" || r.DiskID == "" {
			return fmt.Errorf("replica %v without a broker or a disk", r)
		}
	}
	for _, j := range a.Joins {
		if !a.Holds(j.Replica) || j.Generation == 0 || j.Generation > a.Generation {
			return fmt.Errorf("join %v at generation %d: not a replica, or not at a generation up to %d", j.Replica, j.Generation, a.Generation)
		}
	}
	return nil
}

func encodeUnplaced(u UnplacedReport) []byte {
	return mustMarshal(unplacedJSON{Needed: u.Needed, Live: u.Live, Incarnation: u.Incarnation, Epoch: u.Epoch})
}

func decodeUnplaced(id cluster.ObjectID, value []byte) (UnplacedReport, error) {
	var j unplacedJSON
	if err := json.Unmarshal(value, &j); err != nil {
		return UnplacedReport{}, fmt.Errorf("%w: unplaced report of %v: %v", ErrMalformed, id, err)
	}
	if j.Needed <= 0 || j.Live < 0 || j.Incarnation <= 0 {
		return UnplacedReport{}, fmt.Errorf("%w: unplaced report of %v: %+v", ErrMalformed, id, j)
	}
	return UnplacedReport{Object: id, Needed: j.Needed, Live: j.Live, Incarnation: j.Incarnation, Epoch: j.Epoch}, nil
}

// mustMarshal encodes a value of this file's types, which always encode.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("felix/cluster/control: bug: %T does not encode: %v", v, err))
	}
	return b
}
