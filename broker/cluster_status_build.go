package broker

import (
	"slices"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
)

// clusterStatus is st, as broker self's View saw it, in /cluster's shape;
// ready and notReady are what its /readyz says. Lists are never null, so
// a reader need not tell null from empty.
func clusterStatus(self string, ready bool, notReady string, st control.Status) ClusterStatusJSON {
	reg := make(map[string]cluster.Broker, len(st.Brokers))
	for _, b := range st.Brokers {
		reg[b.ID] = b
	}
	out := ClusterStatusJSON{Version: ClusterStatusVersion, Broker: self, Ready: ready, NotReady: notReady,
		Revision: st.Revision, Brokers: brokersJSON(st, reg), Objects: objectsJSON(st, reg)}
	if st.ControlPlane != "" {
		out.ControlPlane = &ClusterControlPlaneJSON{Broker: st.ControlPlane, Epoch: st.Epoch}
	}
	return out
}

// brokersJSON lists the registered brokers, then those that replicas name
// and that are not registered: a broker gone is still where its shards
// are.
func brokersJSON(st control.Status, reg map[string]cluster.Broker) []ClusterBrokerJSON {
	out := make([]ClusterBrokerJSON, 0, len(st.Brokers))
	for _, b := range st.Brokers {
		out = append(out, ClusterBrokerJSON{ID: b.ID, ClientAddr: b.ClientAddr, PeerAddr: b.PeerAddr, Rack: b.Rack, DiskID: b.DiskID, Live: true})
	}
	var gone []string
	for _, s := range st.Shards {
		for _, r := range s.Assignment.Replicas {
			if _, ok := reg[r.Broker]; !ok && !slices.Contains(gone, r.Broker) {
				gone = append(gone, r.Broker)
			}
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		out = append(out, ClusterBrokerJSON{ID: id})
	}
	return out
}

// objectsJSON lists the catalog's objects with the assignments and the
// report of their own incarnation (those of an older one are the control
// plane's to remove, as View.Local leaves them out).
func objectsJSON(st control.Status, reg map[string]cluster.Broker) []ClusterObjectJSON {
	shards := map[cluster.ObjectID][]control.ShardStatus{}
	for _, s := range st.Shards {
		shards[s.Shard.Object] = append(shards[s.Shard.Object], s)
	}
	unplaced := map[cluster.ObjectID]control.UnplacedReport{}
	for _, u := range st.Unplaced {
		unplaced[u.Object] = u
	}
	out := make([]ClusterObjectJSON, 0, len(st.Objects))
	for _, e := range st.Objects {
		out = append(out, objectJSON(e, shards[e.Object], unplaced[e.Object], reg))
	}
	return out
}

func objectJSON(e control.Entry, shards []control.ShardStatus, u control.UnplacedReport, reg map[string]cluster.Broker) ClusterObjectJSON {
	spec := e.Spec()
	o := ClusterObjectJSON{Kind: e.Object.Kind.String(), Tenant: e.Object.Tenant, Namespace: e.Object.Namespace,
		Name: e.Object.Name, ShardCount: spec.Shards, ReplicationFactor: spec.ReplicationFactor,
		Incarnation: e.Incarnation, Shards: []ClusterShardJSON{}}
	for _, s := range shards {
		if s.Assignment.Incarnation == e.Incarnation {
			o.Shards = append(o.Shards, shardJSON(s, reg))
		}
	}
	switch {
	case len(o.Shards) == spec.Shards:
		o.State = ObjectPlaced
	case u.Incarnation == e.Incarnation:
		o.State = ObjectUnplaced
		o.Unplaced = &ClusterUnplacedJSON{Needed: u.Needed, Live: u.Live, Reason: u.Err().Error()}
	default:
		o.State = ObjectPlacing
	}
	return o
}

func shardJSON(s control.ShardStatus, reg map[string]cluster.Broker) ClusterShardJSON {
	a := s.Assignment
	out := ClusterShardJSON{Shard: s.Shard.Shard, Replicas: make([]ClusterReplicaJSON, 0, len(a.Replicas)),
		LeaderLive: s.LeaderLive, Generation: a.Generation}
	for _, r := range a.Replicas {
		out.Replicas = append(out.Replicas, ClusterReplicaJSON{Broker: r.Broker, DiskID: r.DiskID, Live: liveOn(reg, r),
			JoinedAt: a.JoinedAt(r)})
	}
	if a.Leader != (cluster.Replica{}) {
		out.Leader = &ClusterLeaderJSON{Broker: a.Leader.Broker, DiskID: a.Leader.DiskID}
		if liveOn(reg, a.Leader) {
			out.Leader.ClientAddr = reg[a.Leader.Broker].ClientAddr
		}
	}
	return out
}

// liveOn reports whether r's broker is registered on r's disk.
func liveOn(reg map[string]cluster.Broker, r cluster.Replica) bool {
	b, ok := reg[r.Broker]
	return ok && b.DiskID == r.DiskID
}
