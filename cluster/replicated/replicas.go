package replicated

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
)

// View is what the adapter reads of the cluster's view: the broker's
// control.View, the simulator's table. Both methods are safe to call from
// any goroutine.
type View interface {
	// Assigned lists the shards this broker (on its current disk) holds a
	// replica of, with their assignments; the caller owns the slice.
	Assigned() []Assigned
	// Leader reports whether this broker leads shard of id and, when it
	// does not, the client address of the broker that does ("" when none
	// is known).
	Leader(id engine.StreamID, shard int) (local bool, addr string)
}

// Assigned is one shard's assignment, for a broker among its replicas.
type Assigned struct {
	Shard      cluster.ShardID
	Assignment cluster.Assignment
}

// Config is what New needs.
type Config struct {
	Replica cluster.Replica // this broker on its current disk
	View    View
	Node    *replica.Node
	// Timeout is the publish timeout: a Quorum write waits this long for
	// a majority.
	Timeout time.Duration
	// BootID is this boot of the machine (replica.BootID): how a replica
	// tells a power cut from a clean stop.
	BootID string
	Logger *slog.Logger
}

// Replicas is a broker's replication of the durable shards whose object
// has a replication factor above 1: one replicatedShard per stream shard
// held here, one externalLead per cache primary held here, the parts
// beside them through the node. Safe for concurrent use.
type Replicas struct {
	cfg Config

	mu       sync.Mutex
	shards   map[cluster.ShardID]*replicatedShard
	external map[cluster.ShardID]externalLead // cache shards' primaries held here (HoldPart)
	// holdGroups holds the group logs of a replicated stream shard
	// (group.Manager.HoldReplicas), set once the groups are open.
	holdGroups func(engine.StreamID, int) error
}

var (
	_ engine.Replication     = (*Replicas)(nil)
	_ engine.PartReplication = (*Replicas)(nil)
)

// New is the adapter over cfg.Node.
func New(cfg Config) *Replicas {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Replicas{cfg: cfg, shards: map[cluster.ShardID]*replicatedShard{}, external: map[cluster.ShardID]externalLead{}}
}

// Node is the replica node the adapter drives.
func (r *Replicas) Node() *replica.Node { return r.cfg.Node }

// HoldGroups has AssignRoles hold the group logs of the replicated stream
// shards held here, once the groups are open.
func (r *Replicas) HoldGroups(hold func(engine.StreamID, int) error) {
	r.mu.Lock()
	r.holdGroups = hold
	r.mu.Unlock()
}

// AssignRoles gives every replicated shard its role in the view's
// assignment: a reconcile step, after the engine opened the shards. A
// shard this broker leads at a generation it does not lead yet starts a
// leadership (the control plane fenced this replica there before it named
// it); any other follows. A nil Replicas has nothing to assign.
func (r *Replicas) AssignRoles() error {
	if r == nil {
		return nil
	}
	local := r.cfg.View.Assigned()
	errs := r.assignParts(local)
	for _, ls := range local {
		r.mu.Lock()
		s := r.shards[ls.Shard]
		r.mu.Unlock()
		if s == nil {
			continue // not replicated (factor 1), or not opened yet
		}
		if err := s.assign(ls.Assignment); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close stops the node: every leadership ends, heartbeats stop.
func (r *Replicas) Close() {
	if r != nil {
		r.cfg.Node.Close()
	}
}

// joinedOf is the generation each replica of a that joined the set after
// placement joined at, by broker id (replica.LeadOptions.Joined); nil
// when none did.
func joinedOf(a cluster.Assignment) map[string]uint64 {
	var out map[string]uint64
	for _, j := range a.Joins {
		if out == nil {
			out = make(map[string]uint64, len(a.Joins))
		}
		out[j.Replica.Broker] = j.Generation
	}
	return out
}

// followersOf is every replica of a but me, by broker id.
func followersOf(a cluster.Assignment, me cluster.Replica) []string {
	var out []string
	for _, rep := range a.Replicas {
		if rep != me {
			out = append(out, rep.Broker)
		}
	}
	return slices.Clip(out)
}
