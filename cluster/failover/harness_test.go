package failover_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// lease is L in every test: whole seconds keep the times readable.
const lease = 4 * time.Second

var (
	stream = cluster.ObjectID{Kind: cluster.KindStream, Tenant: "t", Namespace: "ns", Name: "orders"}
	none   cluster.Replica
	ra     = replica("a")
	rb     = replica("b")
	rc     = replica("c")
	rd     = replica("d")
	re     = replica("e")
)

func replica(broker string) cluster.Replica {
	return cluster.Replica{Broker: broker, DiskID: "disk-" + broker}
}

func shardN(n int) cluster.ShardID { return cluster.ShardID{Object: stream, Shard: n} }

// harness steps one machine and keeps what it asked for.
type harness struct {
	t     testing.TB
	m     *failover.Machine
	epoch int64
	// acksBeforeSync: assign says the stream acknowledges before its
	// fsync (not OnCommit): unclean answers do not count then.
	acksBeforeSync bool
}

func newHarness(t testing.TB, epoch int64, now time.Duration) *harness {
	t.Helper()
	m, err := failover.New(failover.Config{Epoch: epoch, Lease: lease, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, m: m, epoch: epoch}
}

// step applies ev and returns the actions it caused.
func (h *harness) step(ev failover.Event) []failover.Action {
	h.t.Helper()
	if err := h.m.Step(ev); err != nil {
		h.t.Fatalf("step %#v: %v", ev, err)
	}
	return h.m.Ready()
}

// assign steps the shard's stored assignment: its leader (none or one of
// replicas) at gen, revision rev.
func (h *harness) assign(id cluster.ShardID, c failover.Consistency, gen uint64, rev int64, leader cluster.Replica,
	replicas ...cluster.Replica) []failover.Action {
	h.t.Helper()
	return h.step(failover.Assigned{Stored: cluster.StoredAssignment{Shard: id, Revision: rev,
		Assignment: cluster.Assignment{Replicas: replicas, Leader: leader, Generation: gen, Incarnation: 1}},
		ReplicationFactor: len(replicas), Consistency: c, AcksDurable: !h.acksBeforeSync})
}

// beat steps one heartbeat and returns the shards its one Grant leases.
func (h *harness) beat(from cluster.Replica, seq uint64, at time.Duration, reports ...failover.Report) []failover.GrantedShard {
	h.t.Helper()
	acts := h.step(failover.Heartbeat{Broker: from, Seq: seq, At: at, Reports: reports})
	grants := only[failover.Grant](acts)
	if len(grants) != 1 || len(acts) != 1 {
		h.t.Fatalf("heartbeat %d from %v: got %v, want one Grant", seq, from, acts)
	}
	g := grants[0]
	if g.To != from || g.HeartbeatSeq != seq || g.Epoch != h.epoch || g.Lease != lease {
		h.t.Fatalf("heartbeat %d from %v: grant %+v", seq, from, g)
	}
	return g.Shards
}

func (h *harness) tick(now time.Duration) []failover.Action {
	h.t.Helper()
	return h.step(failover.Tick{Now: now})
}

// reply steps a replica's fence answer for the promotion to gen.
func (h *harness) reply(id cluster.ShardID, from cluster.Replica, gen uint64, lastGen uint32, logEnd, durable int64,
	clean bool) []failover.Action {
	h.t.Helper()
	return h.step(failover.FenceReplied{Shard: id, From: from, Generation: gen, Epoch: h.epoch, LogEnd: logEnd,
		LastGen: lastGen, Durable: durable, Clean: clean})
}

// oneWrite is the single Write among acts, checked for the epoch.
func (h *harness) oneWrite(acts []failover.Action) failover.Write {
	h.t.Helper()
	ws := only[failover.Write](acts)
	if len(ws) != 1 {
		h.t.Fatalf("got %v, want one Write", acts)
	}
	if ws[0].Epoch != h.epoch {
		h.t.Fatalf("write %+v: epoch is not %d", ws[0], h.epoch)
	}
	return ws[0]
}

// noWrite fails if acts hold a Write.
func (h *harness) noWrite(acts []failover.Action, when string) {
	h.t.Helper()
	if ws := only[failover.Write](acts); len(ws) != 0 {
		h.t.Fatalf("%s: wrote %+v", when, ws)
	}
}

// fenced is who acts fence, in order, all checked for gen and the epoch.
func (h *harness) fenced(acts []failover.Action, gen uint64) []cluster.Replica {
	h.t.Helper()
	var to []cluster.Replica
	for _, f := range only[failover.Fence](acts) {
		if f.Generation != gen || f.Epoch != h.epoch {
			h.t.Fatalf("fence %+v: want generation %d epoch %d", f, gen, h.epoch)
		}
		to = append(to, f.To)
	}
	return to
}

// clear runs step 1 of a promotion that is due at now: the leaderless
// Write of gen, answered at revision rev. It returns who was fenced.
func (h *harness) clear(id cluster.ShardID, now time.Duration, gen uint64, rev int64) []cluster.Replica {
	h.t.Helper()
	w := h.oneWrite(h.tick(now))
	if w.Shard != id || w.Assignment.Generation != gen || w.Assignment.Leader != none {
		h.t.Fatalf("step 1 at %v: %+v, want %v generation %d with no leader", now, w, id, gen)
	}
	return h.fenced(h.step(failover.WriteDone{Seq: w.Seq, Revision: rev}), gen)
}

// named checks acts hold step 5's Write: leader first, at gen, on rev.
func (h *harness) named(acts []failover.Action, leader cluster.Replica, gen uint64, rev int64,
	replicas ...cluster.Replica) failover.Write {
	h.t.Helper()
	w := h.oneWrite(acts)
	want := cluster.Assignment{Replicas: replicas, Leader: leader, Generation: gen, Incarnation: 1}
	if !w.Assignment.Equal(want) || w.ExpectedRevision != rev {
		h.t.Fatalf("step 5: %v on revision %d, want %v on %d", w.Assignment, w.ExpectedRevision, want, rev)
	}
	return w
}

func (h *harness) shardStatus(id cluster.ShardID) failover.ShardStatus {
	h.t.Helper()
	for _, s := range h.m.Status().Shards {
		if s.Stored.Shard == id {
			return s
		}
	}
	h.t.Fatalf("%v is not in the status", id)
	return failover.ShardStatus{}
}

func only[T failover.Action](acts []failover.Action) []T {
	var out []T
	for _, a := range acts {
		if t, ok := a.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

func leads(id cluster.ShardID, gen uint64, durable int64) failover.Report {
	return failover.Report{Shard: id, Generation: gen, Leading: true, LogEnd: durable, LastGen: uint32(gen),
		Durable: durable, LeaderHeard: 0}
}

func follows(id cluster.ShardID, gen uint64, logEnd int64, heard time.Duration) failover.Report {
	return failover.Report{Shard: id, Generation: gen, LogEnd: logEnd, LastGen: uint32(gen), Durable: logEnd,
		LeaderHeard: heard}
}

func granted(gs []failover.GrantedShard, id cluster.ShardID, gen uint64) bool {
	return slices.Contains(gs, failover.GrantedShard{Shard: id, Generation: gen})
}

func isInvalid(err error) bool {
	return errors.Is(err, failover.ErrInvalidEvent) && errors.Is(err, cluster.ErrInvalidEvent)
}
