package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// ServePeer serves the replication frames (a peer.Handler): REPLICATE to
// the log's follower, GENERATION_END to its leader, FENCE to its replica.
// Anything else is refused with ERROR unknown_frame_type.
func (n *Node) ServePeer(from string, req wire.Frame, r peer.Reply) {
	switch req.Type {
	case wire.TypeReplicate:
		n.serveReplicate(from, req, r)
	case wire.TypeGenerationEnd:
		n.serveGenerationEnd(req, r)
	case wire.TypeFence:
		n.serveFence(req, r)
	case wire.TypeLogRead:
		n.serveLogRead(req, r)
	default:
		answerError(r, wire.CodeUnknownFrameType, "a replication node serves REPLICATE, GENERATION_END, FENCE and LOG_READ, not "+req.Type.String())
	}
}

func answerError(r peer.Reply, code wire.Code, msg string) {
	_ = r.Answer(wire.AppendError(nil, r.RequestID(), &wire.Error{Code: code, Message: msg}))
}

func (n *Node) serveReplicate(from string, req wire.Frame, r peer.Reply) {
	var m wire.Replicate
	if err := m.Decode(req, wire.Limits{}); err != nil {
		answerError(r, wire.CodeMalformedFrame, err.Error())
		return
	}
	h := n.lookup(m.Log)
	if h == nil {
		_ = r.Answer(wire.AppendReplicateAck(nil, r.RequestID(), wire.ReplicateAck{Status: wire.ReplicateUnknown}))
		return
	}
	n.mu.Lock()
	l := h.leader
	n.mu.Unlock()
	if l != nil && m.Generation > uint64(l.Generation()) {
		n.Follow(h.id, m.Generation) // a leader of a later generation exists: this one is over
	}
	rr := n.replies.get(r) // node_reply.go
	if err := h.follower.Replicate(from, &m, rr.fn); err != nil {
		n.replies.put(rr) // not answered: the follower refused it whole
		answerError(r, wire.CodeMalformedFrame, err.Error())
	}
}

// serveGenerationEnd answers where the leader's log ends for the asked
// generation: End is one past its last record of a generation at most
// Asked, and LeaderGen carries that record's generation (the largest one
// at most Asked this log holds; 0 for none), as the follower's KIP-279
// truncation expects.
func (n *Node) serveGenerationEnd(req wire.Frame, r peer.Reply) {
	var m wire.GenerationEnd
	if err := m.Decode(req, wire.Limits{}); err != nil {
		answerError(r, wire.CodeMalformedFrame, err.Error())
		return
	}
	h := n.lookup(m.Log)
	var l *Leader
	if h != nil {
		n.mu.Lock()
		l = h.leader
		n.mu.Unlock()
	}
	switch {
	case h == nil:
		answerError(r, wire.CodeNotFound, "this broker holds no replica of "+m.Log.String())
		return
	case m.LeaderGen == 0:
		// Asked as a replica (a part's new leader, node_adopt.go): its own
		// log, whatever its role.
	case l == nil || uint64(l.Generation()) != m.LeaderGen:
		answerError(r, wire.CodeNotLeader, "this broker does not lead "+m.Log.String()+" at that generation")
		return
	}
	asked := uint32(min(m.Asked, 1<<32-1))
	end := h.log.GenerationEnd(asked)
	gen, ok := generationAt(h.log, end-1)
	if !ok {
		answerError(r, wire.CodeStorageFailed, "reading the leader's log of "+m.Log.String())
		return
	}
	_ = r.Answer(wire.AppendGenerationEndOK(nil, r.RequestID(), wire.GenerationEndOK{LeaderGen: uint64(gen), End: end}))
}

// serveLogRead answers a part's new leader with this replica's records
// from the offset it asks (follower_adopt.go), as a REPLICATE: at its
// fence generation, after the generation of its record before them.
func (n *Node) serveLogRead(req wire.Frame, r peer.Reply) {
	var m wire.LogRead
	if err := m.Decode(req, wire.Limits{}); err != nil {
		answerError(r, wire.CodeMalformedFrame, err.Error())
		return
	}
	h := n.heldFor(m.Log, r)
	if h == nil {
		return
	}
	prev, ok := generationAt(h.log, m.From-1)
	if !ok && m.From > h.log.Start() {
		answerError(r, wire.CodeOffsetBelowRetention, fmt.Sprintf("%s: no record at %d here (its log holds %d to %d)",
			m.Log.String(), m.From-1, h.log.Start(), h.log.End()))
		return
	}
	gen := max(h.follower.Generation(), uint64(h.log.LastGeneration()), 1)
	buf, w := wire.BeginReplicate(nil, r.RequestID(), wire.Replicate{Log: m.Log, Generation: gen, First: m.From, PrevGen: min(uint64(prev), gen)})
	if m.From < h.log.End() {
		var err error
		if buf, _, err = h.log.Read(m.From, int(min(m.MaxBytes, adoptBytes)), buf); err != nil {
			answerError(r, wire.CodeOffsetBelowRetention, fmt.Sprintf("%s: reading from %d: %v", m.Log.String(), m.From, err))
			return
		}
	}
	_ = r.Answer(w.Finish(buf))
}

// heldFor is the replica of ref held here, or nil once it answered
// not_found.
func (n *Node) heldFor(ref wire.LogRef, r peer.Reply) *held {
	h := n.lookup(ref)
	if h == nil {
		answerError(r, wire.CodeNotFound, "this broker holds no replica of "+ref.String())
	}
	return h
}

// generationAt is the generation of the record at offset (0 before the
// first).
func generationAt(log Log, offset int64) (uint32, bool) {
	if offset < 0 {
		return 0, true
	}
	out, _, err := log.Read(offset, 1, nil)
	if err != nil {
		return 0, false
	}
	it := segment.NewIter(out)
	rec, ok := it.Next()
	return rec.Generation, ok
}

func (n *Node) serveFence(req wire.Frame, r peer.Reply) {
	var m wire.Fence
	if err := m.Decode(req, wire.Limits{}); err != nil {
		answerError(r, wire.CodeMalformedFrame, err.Error())
		return
	}
	h := n.heldFor(m.Log, r)
	if h == nil {
		return
	}
	if st := h.follower.fences.State(); m.Generation < st.Generation || m.Epoch != 0 && m.Epoch < st.Epoch {
		// Refused before it deposes anything: a deposed control plane's
		// fence (a lower epoch) must not end the current leadership. The
		// fence state only rises, so Fence would refuse it too.
		answerError(r, wire.CodePreconditionFailed, fmt.Sprintf("%v: fence at generation %d epoch %d; this replica is at generation %d epoch %d",
			ErrStaleFence, m.Generation, m.Epoch, st.Generation, st.Epoch))
		return
	}
	gen, epoch := m.Generation, m.Epoch
	go func() { // the fence's fsync is no work for a transport goroutine
		ok, err := h.follower.Fence(gen, epoch)
		if err != nil { // a stale generation or epoch: a deposed control plane's, which deposes nobody
			answerError(r, wire.CodePreconditionFailed, err.Error())
			return
		}
		if err := n.fenceParts(h.id, gen, epoch); err != nil {
			answerError(r, wire.CodeStorageFailed, err.Error()) // the control plane fences again
			return
		}
		n.mu.Lock()
		l := h.leader
		n.mu.Unlock()
		if l != nil && gen > uint64(l.Generation()) {
			n.Follow(h.id, 0) // it stops acknowledging before the fence is answered
		}
		_ = r.Answer(wire.AppendFenceOK(nil, r.RequestID(), ok))
	}()
}

// fenceParts fences every secondary part of id where its primary was
// fenced: a part's follower refuses its old leader from then on too.
func (n *Node) fenceParts(id cluster.ShardID, gen uint64, epoch int64) error {
	n.mu.Lock()
	parts := slices.Clone(n.parts[id])
	n.mu.Unlock()
	var errs []error
	for _, p := range parts {
		if _, err := p.follower.Fence(gen, epoch); err != nil {
			errs = append(errs, fmt.Errorf("fencing %s: %w", p.ref.String(), err))
		}
	}
	return errors.Join(errs...)
}

// heartbeats sends a heartbeat every L/4, and one at once when a
// leadership begins (heartbeatSoon), until Close.
func (n *Node) heartbeats() {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.Lease / 4)
	defer t.Stop()
	for {
		n.heartbeat()
		select {
		case <-n.done:
			return
		case <-t.C:
		case <-n.beat:
		}
	}
}

// heartbeat sends one heartbeat and applies the grant that answers it.
// The lease counts from the send.
func (n *Node) heartbeat() {
	to := n.cfg.ControlPlane()
	if to == "" {
		return
	}
	n.mu.Lock()
	n.seq++
	seq := n.seq
	buf, w := wire.BeginHeartbeat(nil, 0, seq, []byte(n.cfg.Broker.Broker), []byte(n.cfg.Broker.DiskID))
	for _, h := range n.logs {
		if h.part == "" { // a secondary part follows its primary's lease
			buf = w.Report(buf, n.reportLocked(h))
		}
	}
	buf = w.Finish(buf)
	n.mu.Unlock()
	sent := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.HeartbeatTimeout)
	defer cancel()
	answer, err := n.cfg.Transport.Call(ctx, to, buf, nil)
	if err != nil || answer.Type != wire.TypeLeaseGrant {
		return
	}
	var g wire.LeaseGrant
	if g.Decode(answer, wire.Limits{}) != nil || g.HeartbeatSeq != seq {
		return
	}
	for _, gl := range g.Logs {
		if h := n.lookup(gl.Log); h != nil {
			h.lease.Grant(sent, time.Duration(g.LeaseNanos), gl.Generation, g.Epoch)
		}
	}
}

// reportLocked is what the heartbeat says of h. n.mu held.
func (n *Node) reportLocked(h *held) wire.HeartbeatReport {
	rep := wire.HeartbeatReport{Log: h.ref, Generation: max(h.follower.Generation(), h.assigned), LogEnd: h.log.End(),
		LastGen: uint64(h.log.LastGeneration()), Durable: h.log.Durable(), LeaderHeard: -1}
	if h.leader != nil {
		// A leader's LeaderHeard is how long ago a quorum of its followers
		// last answered it: a leader they cannot reach is replaced.
		rep.Leading, rep.Generation = true, uint64(h.leader.Generation())
		rep.LeaderHeard = int64(time.Since(h.leader.QuorumHeard()))
	} else if at, ok := h.follower.LeaderHeard(); ok {
		rep.LeaderHeard = int64(time.Since(at))
	}
	return rep
}
