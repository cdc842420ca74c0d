package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// controlID is the control plane's id on the network.
const controlID = "cp"

// control is the control plane: the real failover machine, driven on the
// simulator's goroutine. It answers heartbeats with the machine's grants,
// sends its fences (their outcomes come back through the inbox) and
// carries out its writes on an in-memory table, compare-and-swapped on
// the revision and guarded by the elected epoch as the store guards a
// real one. A restart (kill) elects a new machine at a higher epoch over
// the same table; a pause holds its messages and stops its ticks.
type control struct {
	w       *World
	tr      *peer.Mem
	m       *failover.Machine
	epoch   int64
	table   map[cluster.ShardID]cluster.StoredAssignment
	rev     int64
	replies map[heartbeatKey]peer.Reply
	paused  bool
}

type heartbeatKey struct {
	broker string
	seq    uint64
}

func newControl(w *World) (*control, error) {
	tr, err := w.net.Join(controlID)
	if err != nil {
		return nil, err
	}
	cp := &control{w: w, tr: tr, table: map[cluster.ShardID]cluster.StoredAssignment{}}
	tr.Handle(peer.HandlerFunc(cp.serve))
	return cp, cp.elect()
}

// elect starts a new term: a machine of the next epoch, which waits a
// full lease before it promotes anybody, stepped every stored assignment.
func (cp *control) elect() error {
	cp.epoch++
	m, err := failover.New(failover.Config{Epoch: cp.epoch, Lease: cp.w.cfg.Lease, Now: cp.w.now()})
	if err != nil {
		return err
	}
	cp.m, cp.replies = m, map[heartbeatKey]peer.Reply{}
	for _, id := range cp.w.shardIDs() {
		if s, ok := cp.table[id]; ok {
			cp.step(cp.assigned(s))
		}
	}
	return nil
}

func (cp *control) assigned(s cluster.StoredAssignment) failover.Assigned {
	spec := cp.w.spec(s.Shard)
	return failover.Assigned{Stored: s, ReplicationFactor: cp.w.cfg.Brokers, Consistency: spec.Consistency,
		AcksDurable: spec.Fsync.Kind == shardlog.FsyncOnCommit}
}

// place stores shard id's first assignment: every broker, leader first.
func (cp *control) place(id cluster.ShardID, leader int) {
	a := cluster.Assignment{Generation: 1, Incarnation: 1}
	for k := range cp.w.cfg.Brokers {
		b := cp.w.brokers[(leader+k)%len(cp.w.brokers)]
		a.Replicas = append(a.Replicas, cluster.Replica{Broker: b.id, DiskID: b.disk})
	}
	a.Leader = a.Replicas[0]
	cp.rev++
	s := cluster.StoredAssignment{Shard: id, Assignment: a, Revision: cp.rev}
	cp.table[id] = s
	cp.step(cp.assigned(s))
	cp.w.apply(s)
}

// tick steps the machine's clock (not while paused).
func (cp *control) tick() {
	if !cp.paused {
		cp.step(failover.Tick{Now: cp.w.now()})
	}
}

// step steps ev and carries out what the machine asks.
func (cp *control) step(ev failover.Event) {
	if err := cp.m.Step(ev); err != nil {
		cp.w.trace.add("cp step %T: %v", ev, err)
	}
	for _, a := range cp.m.Ready() {
		switch a := a.(type) {
		case failover.Grant:
			cp.grant(a)
		case failover.Fence:
			cp.fence(a)
		case failover.Write:
			cp.write(a)
		}
	}
}

// serve takes a heartbeat off the network; it runs on the simulator's
// goroutine, inside Network.Deliver.
func (cp *control) serve(_ string, req wire.Frame, r peer.Reply) {
	var h wire.Heartbeat
	if req.Type != wire.TypeHeartbeat || h.Decode(req, wire.Limits{}) != nil {
		_ = r.Answer(wire.AppendError(nil, r.RequestID(), &wire.Error{Code: wire.CodeMalformedFrame, Message: "the control plane serves HEARTBEAT"}))
		return
	}
	ev := failover.Heartbeat{Broker: cluster.Replica{Broker: string(h.Broker), DiskID: string(h.DiskID)}, Seq: h.Seq, At: cp.w.now()}
	for _, rep := range h.Reports {
		ev.Reports = append(ev.Reports, failover.Report{Shard: shardOfRef(rep.Log), Generation: rep.Generation,
			Leading: rep.Leading, LogEnd: rep.LogEnd, LastGen: uint32(rep.LastGen), Durable: rep.Durable,
			LeaderHeard: time.Duration(rep.LeaderHeard)})
	}
	cp.replies[heartbeatKey{ev.Broker.Broker, ev.Seq}] = r
	cp.step(ev)
}

// shardName names a shard in the trace: "shard 1" of the stream, as the
// trace always did, or "cache c0".
func shardName(id cluster.ShardID) string {
	if id.Object.Kind == cluster.KindCache {
		return "cache " + id.Object.Name
	}
	return fmt.Sprintf("shard %d", id.Shard)
}

func shardOfRef(r wire.LogRef) cluster.ShardID {
	return cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.Kind(r.Kind), Tenant: string(r.Tenant),
		Namespace: string(r.Namespace), Name: string(r.Name)}, Shard: int(r.Shard)}
}

func (cp *control) grant(g failover.Grant) {
	key := heartbeatKey{g.To.Broker, g.HeartbeatSeq}
	r, ok := cp.replies[key]
	if !ok {
		return
	}
	delete(cp.replies, key)
	lease := g.Lease
	if cp.w.cfg.Bug == BugLongGrant {
		lease *= 4
	}
	buf, enc := wire.BeginLeaseGrant(nil, 0, g.HeartbeatSeq, g.Epoch, int64(lease))
	for _, s := range g.Shards {
		buf = enc.Granted(buf, wire.GrantedLog{Log: replica.RefOf(s.Shard), Generation: s.Generation})
		if s.Shard.Object.Kind == cluster.KindStream { // the leases of the stream's acks (check.Ack)
			cp.w.net.granted(g.To.Broker, s.Shard.Shard, s.Generation)
		}
	}
	_ = r.Answer(enc.Finish(buf))
}

// fence sends one fence; its outcome comes back through the inbox and is
// stepped only into the machine that sent it.
func (cp *control) fence(f failover.Fence) {
	cp.w.trace.add("fence %s at %d to %s epoch %d", shardName(f.Shard), f.Generation, f.To.Broker, f.Epoch)
	cp.w.faults.fenced(cp.w)
	m := cp.m
	req := wire.AppendFence(nil, 0, wire.Fence{Log: replica.RefOf(f.Shard), Generation: f.Generation, Epoch: f.Epoch})
	call := &peer.Call{To: f.To.Broker, Request: req, Timeout: cp.w.cfg.Lease, Done: func(_ *peer.Call, answer wire.Frame, err error) {
		var ok wire.FenceOK
		if err != nil || answer.Type != wire.TypeFenceOK || ok.Decode(answer, wire.Limits{}) != nil {
			return // the machine sends it again
		}
		ev := failover.FenceReplied{Shard: f.Shard, From: f.To, Generation: ok.Generation, Epoch: ok.Epoch,
			LogEnd: ok.LogEnd, LastGen: uint32(ok.LastGen), Durable: ok.Durable,
			NewDisk: ok.Flags&wire.FenceNewDisk != 0, Clean: ok.Flags&wire.FenceClean != 0}
		key := fmt.Sprintf("fence %s %s %d", shardName(f.Shard), f.To.Broker, f.Generation)
		cp.w.inbox.put(key, func() {
			if cp.m == m && !cp.paused {
				cp.step(ev)
			}
		})
	}}
	_ = cp.tr.Send(call)
}

// write compare-and-swaps the table, steps the outcome and tells the
// brokers their roles.
func (cp *control) write(wr failover.Write) {
	cur := cp.table[wr.Shard]
	if cur.Revision != wr.ExpectedRevision || wr.Epoch != cp.epoch {
		cp.step(failover.WriteFailed{Seq: wr.Seq})
		return
	}
	cp.rev++
	s := cluster.StoredAssignment{Shard: wr.Shard, Assignment: wr.Assignment.Clone(), Revision: cp.rev}
	cp.table[wr.Shard] = s
	cp.notePromotion(cur, s)
	if a := s.Assignment; a.Leader != (cluster.Replica{}) && slices.ContainsFunc(a.Joins, func(j cluster.Join) bool { return j.Generation == a.Generation }) {
		cp.w.stats.Replacements++ // a gone replica's place given to its broker's new disk, and a leader named
	}
	cp.w.trace.add("write %s gen %d leader %q", shardName(wr.Shard), s.Assignment.Generation, s.Assignment.Leader.Broker)
	cp.step(failover.WriteDone{Seq: wr.Seq, Revision: s.Revision})
	cp.step(cp.assigned(s))
	cp.w.apply(s)
}

// notePromotion records, for the checker, a stream shard's promotion
// beginning: the first write of a later generation naming no leader (the
// machine's step 1), at the instant it is applied. Every ack at an earlier
// generation must precede it (check's ack-after-promotion).
func (cp *control) notePromotion(before, after cluster.StoredAssignment) {
	id := after.Shard
	if id.Object != shardID(0).Object || id.Shard >= len(cp.w.rec) {
		return // a cache's shard: its acks are not recorded
	}
	a := after.Assignment
	if a.Leader != (cluster.Replica{}) || a.Generation <= before.Assignment.Generation {
		return
	}
	cp.w.rec[id.Shard].Promotion(check.Promotion{Shard: checkShard(id.Shard), Generation: a.Generation, Time: cp.w.nowNs()})
}
