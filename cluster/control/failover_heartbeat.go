package control

import (
	"context"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
)

// heartbeatIn is a decoded heartbeat waiting for the driver's goroutine,
// with the reply its grant goes to.
type heartbeatIn struct {
	ev    failover.Heartbeat // At is set when it is stepped
	reply peer.Reply
}

// heartbeatKey names the heartbeat a Grant answers.
type heartbeatKey struct {
	broker cluster.Replica
	seq    uint64
}

// ServeHeartbeat serves one HEARTBEAT a broker sent (the broker's peer
// handler calls it for wire.TypeHeartbeat frames): its grant goes back on
// r as a LEASE_GRANT once the driver's goroutine has stepped it. It never
// blocks and copies what it keeps of req. A heartbeat that is not one, or
// that names another broker than from, is refused; one that comes when
// the term has ended is refused not_leader, and one past a full queue
// overloaded (the broker's next heartbeat is its retry).
func (d *FailoverDriver) ServeHeartbeat(from string, req wire.Frame, r peer.Reply) {
	ev, code, msg := decodeHeartbeat(from, req)
	if code != 0 {
		answerError(r, code, msg)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		refuseNotLeader(r, "the control plane's term ended")
		return
	}
	select {
	case d.heartbeats <- heartbeatIn{ev: ev, reply: r}:
	default:
		answerError(r, wire.CodeOverloaded, "the control plane's heartbeat queue is full")
	}
}

// ServeHeartbeat serves a broker's HEARTBEAT with the failover driver of
// the term this Controller leads now, and refuses it not_leader while it
// leads none (or runs no failover driver: ControllerConfig.Peers is nil).
// The broker's peer handler calls it for wire.TypeHeartbeat frames; it
// never blocks.
func (c *Controller) ServeHeartbeat(from string, req wire.Frame, r peer.Reply) {
	if d := c.failover.Load(); d != nil {
		d.ServeHeartbeat(from, req, r)
		return
	}
	refuseNotLeader(r, "this broker does not run the control plane now")
}

// decodeHeartbeat copies a HEARTBEAT into the machine's event, leaving
// out the reports it cannot be about: a log with a Part (not a shard's
// records), a shard outside the layout, a shard reported twice. A frame
// it refuses is a code and a message to answer with.
func decodeHeartbeat(from string, req wire.Frame) (failover.Heartbeat, wire.Code, string) {
	var h wire.Heartbeat
	if req.Type != wire.TypeHeartbeat {
		return failover.Heartbeat{}, wire.CodeInvalidArgument, "the control plane serves HEARTBEAT here, not " + req.Type.String()
	}
	if err := h.Decode(req, wire.Limits{}); err != nil {
		return failover.Heartbeat{}, wire.CodeMalformedFrame, err.Error()
	}
	ev := failover.Heartbeat{Broker: cluster.Replica{Broker: string(h.Broker), DiskID: string(h.DiskID)}, Seq: h.Seq}
	if ev.Broker.Broker != from {
		return failover.Heartbeat{}, wire.CodeInvalidArgument, "a heartbeat from " + from + " names broker " + ev.Broker.Broker
	}
	seen := make(map[cluster.ShardID]bool, len(h.Reports))
	for _, rep := range h.Reports {
		id, ok := shardOfRef(rep.Log)
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		ev.Reports = append(ev.Reports, failover.Report{Shard: id, Generation: rep.Generation, Leading: rep.Leading,
			LogEnd: rep.LogEnd, LastGen: uint32(rep.LastGen), Durable: rep.Durable,
			LeaderHeard: time.Duration(rep.LeaderHeard)})
	}
	return ev, 0, ""
}

// heartbeat steps one heartbeat received now; the machine's Grant for it
// is answered on its reply as the actions are carried out.
func (d *FailoverDriver) heartbeat(ctx context.Context, h heartbeatIn) {
	key := heartbeatKey{h.ev.Broker, h.ev.Seq}
	if old, ok := d.replies[key]; ok {
		answerError(old, wire.CodeInvalidArgument, "another heartbeat with this sequence number came")
	}
	d.replies[key] = h.reply
	h.ev.At = d.now()
	d.step(ctx, h.ev)
	if r, ok := d.replies[key]; ok { // the machine refused it: no grant
		delete(d.replies, key)
		answerError(r, wire.CodeInvalidArgument, "the control plane cannot take this heartbeat")
	}
}

// grant answers the heartbeat g is for with a LEASE_GRANT.
func (d *FailoverDriver) grant(g failover.Grant) {
	key := heartbeatKey{g.To, g.HeartbeatSeq}
	r, ok := d.replies[key]
	if !ok {
		return
	}
	delete(d.replies, key)
	buf, w := wire.BeginLeaseGrant(nil, r.RequestID(), g.HeartbeatSeq, g.Epoch, int64(g.Lease))
	for _, s := range g.Shards {
		buf = w.Granted(buf, wire.GrantedLog{Log: refOfShard(s.Shard), Generation: s.Generation})
	}
	if err := r.Answer(w.Finish(buf)); err != nil {
		d.log.Debug("control plane failover: a grant not sent", "broker", g.To.Broker, "err", err)
		return
	}
	d.logFirstGrants(g)
}

// logFirstGrants logs each shard this grant leases to a broker, or at a
// generation, the term has not leased it to before: once a leader and
// generation a term, not at every heartbeat.
func (d *FailoverDriver) logFirstGrants(g failover.Grant) {
	for _, s := range g.Shards {
		leased := grantedTo{g.To, s.Generation}
		if d.granted[s.Shard] == leased {
			continue
		}
		d.granted[s.Shard] = leased
		d.log.Info("control plane failover: a shard's first lease granted", "shard", s.Shard.String(), "to", g.To.String(),
			"generation", s.Generation, "epoch", g.Epoch, "since_term_began", d.now())
	}
}

// grantedTo is the leader and generation a term last leased a shard to.
type grantedTo struct {
	to         cluster.Replica
	generation uint64
}

// refOfShard is the LogRef of a shard's records (replica.RefOf).
func refOfShard(id cluster.ShardID) wire.LogRef {
	return wire.LogRef{Kind: uint8(id.Object.Kind), Tenant: []byte(id.Object.Tenant),
		Namespace: []byte(id.Object.Namespace), Name: []byte(id.Object.Name), Shard: uint32(id.Shard)}
}

// shardOfRef is the shard whose records r names, copied out of the frame;
// false for a log with a Part (not a shard's records) or a name outside
// the layout.
func shardOfRef(r wire.LogRef) (cluster.ShardID, bool) {
	if len(r.Part) != 0 || r.Shard >= cluster.ShardsMax {
		return cluster.ShardID{}, false
	}
	id := cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.Kind(r.Kind), Tenant: string(r.Tenant),
		Namespace: string(r.Namespace), Name: string(r.Name)}, Shard: int(r.Shard)}
	if id.Object.Check() != nil {
		return cluster.ShardID{}, false
	}
	return id, true
}

func answerError(r peer.Reply, code wire.Code, msg string) {
	_ = r.Answer(wire.AppendError(nil, r.RequestID(), &wire.Error{Code: code, Message: msg}))
}

func refuseNotLeader(r peer.Reply, msg string) { answerError(r, wire.CodeNotLeader, msg) }
