package broker

import (
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/cluster/replicated"
)

// openReplicas starts the replica node, which heartbeats the control
// plane the View names every L/4, and the adapter (cluster/replicated)
// that hands the engine's, the groups' and the caches' replicated shards
// to it and gives them their roles in the View.
func (n *node) openReplicas() error {
	rn, err := replica.NewNode(replica.NodeConfig{Broker: n.replica(), Transport: n.peers, Lease: n.cfg.ShardLease,
		ControlPlane: func() string { id, _ := n.view.ControlPlane(); return id }, OnAck: n.journal.onAck()})
	if err != nil {
		return err
	}
	n.replicas = replicated.New(replicated.Config{Replica: n.replica(), View: replicationView{n.view}, Node: rn,
		Timeout: n.cfg.PublishTimeout, BootID: replica.BootID(), Logger: n.logger})
	return nil
}

// replicationView is the View as the adapter reads it.
type replicationView struct{ *control.View }

// Assigned lists the shards held here with their assignments.
func (v replicationView) Assigned() []replicated.Assigned {
	local := v.Local()
	out := make([]replicated.Assigned, len(local))
	for i, ls := range local {
		out[i] = replicated.Assigned{Shard: ls.Shard, Assignment: ls.Assignment}
	}
	return out
}
