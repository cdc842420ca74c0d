package broker

// GET /cluster's answer, as JSON. `felix cluster status` reads it, and
// so may any tool: fields may be added within a version (a reader ignores
// the fields it does not know); none is removed or changes its meaning
// without a new ClusterStatusVersion. testdata/cluster_status.json holds
// one, byte for byte (TestTheClusterStatusJSONIsFrozen).

// ClusterStatusVersion is ClusterStatusJSON.Version.
const ClusterStatusVersion = 1

// ClusterStatusJSON is the cluster as this broker's View last saw it.
type ClusterStatusJSON struct {
	Version int    `json:"version"`
	Broker  string `json:"broker"` // this broker's id
	// Ready is what /readyz says (200); NotReady, when not, is why.
	Ready    bool   `json:"ready"`
	NotReady string `json:"not_ready,omitempty"`
	// Revision is the store's revision the View has read up to: two
	// brokers' answers at the same revision saw the same state.
	Revision int64 `json:"revision"`
	// ControlPlane is the broker whose control plane leads, null while
	// none does.
	ControlPlane *ClusterControlPlaneJSON `json:"control_plane"`
	// Brokers are the registered brokers by id, then the brokers that
	// some shard's replicas name but that are not registered (live
	// false, no addresses).
	Brokers []ClusterBrokerJSON `json:"brokers"`
	// Objects are the catalog's streams and caches, in kind, tenant,
	// namespace and name order.
	Objects []ClusterObjectJSON `json:"objects"`
}

// ClusterControlPlaneJSON is the control plane's holder: the broker whose
// candidacy won the election, and the election's revision (its epoch,
// stamped on every assignment it writes).
type ClusterControlPlaneJSON struct {
	Broker string `json:"broker"`
	Epoch  int64  `json:"epoch"`
}

// ClusterBrokerJSON is one broker. Live is whether it is registered now
// (its registration's lease holds).
type ClusterBrokerJSON struct {
	ID         string `json:"id"`
	ClientAddr string `json:"client_addr"`
	PeerAddr   string `json:"peer_addr"`
	Rack       string `json:"rack"`
	DiskID     string `json:"disk_id"`
	Live       bool   `json:"live"`
}

// The states of a ClusterObjectJSON.
const (
	ObjectPlaced   = "placed"   // every shard has an assignment
	ObjectUnplaced = "unplaced" // the control plane could not place it: Unplaced says why
	ObjectPlacing  = "placing"  // created, not yet decided about
)

// ClusterObjectJSON is one stream or cache and where its shards are.
type ClusterObjectJSON struct {
	Kind              string `json:"kind"` // "stream" or "cache"
	Tenant            string `json:"tenant"`
	Namespace         string `json:"namespace"`
	Name              string `json:"name"`
	ShardCount        int    `json:"shard_count"`
	ReplicationFactor int    `json:"replication_factor"`
	// Incarnation is the catalog key's create revision: an object
	// deleted and created again under its name is another one.
	Incarnation int64  `json:"incarnation"`
	State       string `json:"state"` // ObjectPlaced, ObjectUnplaced or ObjectPlacing
	// Shards are the assignments of this incarnation, in shard order.
	Shards   []ClusterShardJSON   `json:"shards"`
	Unplaced *ClusterUnplacedJSON `json:"unplaced,omitempty"`
}

// ClusterShardJSON is one shard's assignment.
type ClusterShardJSON struct {
	Shard    int                  `json:"shard"`
	Replicas []ClusterReplicaJSON `json:"replicas"` // in preference order
	// Leader is the replica that serves the shard, null while none does;
	// LeaderLive is whether its broker is registered on its disk.
	Leader     *ClusterLeaderJSON `json:"leader"`
	LeaderLive bool               `json:"leader_live"`
	// Generation rises with every new leader.
	Generation uint64 `json:"generation"`
}

// ClusterReplicaJSON is a replica: a broker on one disk. Live is whether
// that broker is registered on that disk (a broker back on another disk
// holds none of the replica's data). JoinedAt, for a replica that took a
// gone replica's place (its broker back on a new disk), is the generation
// it joined at: it counts as holding the shard's data once its log
// reaches that generation.
type ClusterReplicaJSON struct {
	Broker   string `json:"broker"`
	DiskID   string `json:"disk_id"`
	Live     bool   `json:"live"`
	JoinedAt uint64 `json:"joined_at,omitempty"`
}

// ClusterLeaderJSON is a shard's leader and the client address its broker
// registered ("" when that broker is not registered on the leader's disk).
type ClusterLeaderJSON struct {
	Broker     string `json:"broker"`
	DiskID     string `json:"disk_id"`
	ClientAddr string `json:"client_addr"`
}

// ClusterUnplacedJSON is why the control plane did not place an object:
// its replication factor needs more brokers than were live.
type ClusterUnplacedJSON struct {
	Needed int    `json:"needed"`
	Live   int    `json:"live"`
	Reason string `json:"reason"`
}
