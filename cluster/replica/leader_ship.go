package replica

import (
	"slices"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// remote is what a leader knows of one follower: where its next batch
// starts, what it has acknowledged in this generation, and the calls in
// flight to it. Guarded by the leader's fmu.
type remote struct {
	l  *Leader
	id string

	next     int64  // the first offset of the next batch to send
	prevGen  uint32 // the generation of the record at next-1
	prevOK   bool   // prevGen is known
	session  uint64 // bumped whenever next is reset: older answers do not move it
	matched  int64  // its acknowledged end in this generation: counted in the quorum
	heard    time.Time
	level    time.Time // when it last held everything the leader had: its lag counts from there
	retry    time.Time // nothing is sent before it
	inflight int
	free     []*shipCall
}

// shipCall is one REPLICATE in flight, reused from batch to batch.
type shipCall struct {
	peer.Call
	r       *remote
	session uint64
	next    int64 // one past the batch's last record
}

func newRemote(l *Leader, id string) *remote {
	now := time.Now()
	r := &remote{l: l, id: id, next: l.cfg.Log.End(), level: now, heard: now} // heard: counted from the leadership's start
	for range l.cfg.Inflight {
		c := &shipCall{r: r}
		c.To, c.Done, c.Timeout = id, c.done, l.cfg.Timeout
		r.free = append(r.free, c)
	}
	return r
}

// ship fills every follower's free slots with batches from the log.
func (l *Leader) ship() {
	now := time.Now()
	end := l.cfg.Log.End()
	l.fmu.Lock()
	defer l.fmu.Unlock()
	for _, r := range l.followers {
		for len(r.free) > 0 && !now.Before(r.retry) && r.next <= end {
			if r.next == end && r.inflight > 0 {
				break // caught up: a probe only when nothing is in flight
			}
			if r.next == end && r.matched >= end && now.Sub(r.heard) < tick*5 {
				break // caught up and heard lately: no probe needed
			}
			if !l.sendLocked(r, end) {
				break
			}
		}
	}
}

// sendLocked sends r one batch from r.next (empty at the log's end: a
// probe that carries the commit). false: nothing was sent.
func (l *Leader) sendLocked(r *remote, end int64) bool {
	if !r.prevOK && !l.learnPrevLocked(r) {
		r.retry = time.Now().Add(retryAfter)
		return false
	}
	m := wire.Replicate{Log: l.cfg.Ref, Generation: uint64(l.gen), First: r.next, PrevGen: uint64(r.prevGen), Commit: l.commit.Load()}
	buf, w := wire.BeginReplicate(l.buf[:0], 0, m)
	headerEnd := len(buf)
	next := r.next
	if r.next < end {
		var err error
		buf, next, err = l.cfg.Log.Read(r.next, l.cfg.BatchBytes, buf)
		if err != nil {
			r.retry = time.Now().Add(retryAfter) // below the log's start: it cannot be caught up from the log
			l.buf = buf[:0]
			return false
		}
	}
	lastGen := r.prevGen
	if next > r.next {
		lastGen = lastGeneration(buf[headerEnd:], l.gen, next, l.genStartNext.Load())
	}
	l.buf = w.Finish(buf)
	c := r.free[len(r.free)-1]
	c.Request, c.session, c.next = l.buf, r.session, next
	if err := l.cfg.Transport.Send(&c.Call); err != nil {
		r.retry = time.Now().Add(retryAfter)
		return false
	}
	r.free = r.free[:len(r.free)-1]
	r.inflight++
	r.next, r.prevGen = next, lastGen
	return next > m.First
}

// learnPrevLocked reads the generation of the record before r.next.
func (l *Leader) learnPrevLocked(r *remote) bool {
	if r.next == 0 {
		r.prevGen, r.prevOK = 0, true
		return true
	}
	if start := l.genStartNext.Load(); r.next-1 >= start-1 {
		r.prevGen, r.prevOK = l.gen, true
		return true
	}
	out, _, err := l.cfg.Log.Read(r.next-1, 1, l.buf[:0])
	l.buf = out[:0]
	if err != nil {
		return false
	}
	it := segment.NewIter(out)
	rec, ok := it.Next()
	if !ok || rec.Offset != r.next-1 {
		return false // compaction removed it: resend from further back
	}
	r.prevGen, r.prevOK = rec.Generation, true
	return true
}

// lastGeneration is the generation of the last record of a batch ending
// at next: this generation's when it lies past the start record, else the
// record's own.
func lastGeneration(records []byte, gen uint32, next, genStartNext int64) uint32 {
	if next-1 >= genStartNext-1 {
		return gen
	}
	var last uint32
	for it := segment.NewIter(records); ; {
		rec, ok := it.Next()
		if !ok {
			return last
		}
		last = rec.Generation
	}
}

// done is a REPLICATE's outcome, on a transport goroutine.
func (c *shipCall) done(_ *peer.Call, answer wire.Frame, err error) {
	r := c.r
	l := r.l
	var ack wire.ReplicateAck
	if err == nil && answer.Type == wire.TypeReplicateAck {
		err = ack.Decode(answer, wire.Limits{})
	} else if err == nil {
		err = errRefused
	}
	l.fmu.Lock()
	r.inflight--
	r.free = append(r.free, c)
	switch {
	case err != nil:
		l.resetLocked(r, r.matched, c.session)
		r.retry = time.Now().Add(retryAfter)
	case ack.Status == wire.ReplicateFenced && ack.FenceGen > uint64(l.gen):
		l.fmu.Unlock()
		l.Depose()
		return
	case ack.Status == wire.ReplicateAppended && ack.FenceGen == uint64(l.gen):
		r.heard = time.Now()
		r.matched = max(r.matched, ack.Durable)
		if r.matched >= l.cfg.Log.End() {
			r.level = r.heard
		}
		if ack.LogEnd < c.next {
			l.resetLocked(r, ack.LogEnd, c.session)
		}
	case ack.Status == wire.ReplicateMismatch:
		r.heard = time.Now()
		l.resetLocked(r, ack.LogEnd, c.session)
		r.retry = time.Now().Add(retryAfter)
	default: // unknown, or fenced at our own generation before it synchronised
		l.resetLocked(r, ack.LogEnd, c.session)
		r.retry = time.Now().Add(retryAfter)
	}
	l.fmu.Unlock()
	l.settle()
	l.signal()
}

// resetLocked starts r's stream again from end (capped at the log's),
// unless an answer of an older session asks it.
func (l *Leader) resetLocked(r *remote, end int64, session uint64) {
	if session != r.session {
		return
	}
	r.session++
	r.next = min(max(end, l.cfg.Log.Start()), l.cfg.Log.End())
	r.prevOK = false
}

// FollowerLag is how far one follower is behind its leader.
type FollowerLag struct {
	Broker  string
	Records int64         // the leader's end less what the follower acknowledged
	Behind  time.Duration // since it last held everything the leader had; 0 when it does
}

// Lag reports each follower's lag, in the order the followers were given.
func (l *Leader) Lag() []FollowerLag {
	end, now := l.cfg.Log.End(), time.Now()
	l.fmu.Lock()
	defer l.fmu.Unlock()
	out := make([]FollowerLag, 0, len(l.followers))
	for _, r := range l.followers {
		fl := FollowerLag{Broker: r.id, Records: max(end-r.matched, 0)}
		if fl.Records > 0 {
			fl.Behind = now.Sub(r.level)
		}
		out = append(out, fl)
	}
	return out
}

// QuorumHeard is when the leader last heard enough followers to make a
// majority with itself: the (M-1)-th most recent answer of its followers
// (from the leadership's start when fewer have answered since). A leader
// whose followers cannot reach it reports how long ago that was, and the
// control plane replaces it once that passes a lease.
func (l *Leader) QuorumHeard() time.Time {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	need := Majority(len(l.followers)+1) - 1
	if need <= 0 {
		return time.Now()
	}
	var room [8]time.Time
	heard := room[:0]
	for _, r := range l.followers {
		heard = append(heard, r.heard)
	}
	slices.SortFunc(heard, func(a, b time.Time) int { return b.Compare(a) }) // most recent first
	return heard[need-1]
}

// stampEntries gives the entries without a timestamp now, as the log
// would: the records shipped from them must be the log's.
func stampEntries(entries []shardlog.Entry, now int64) {
	for i := range entries {
		if entries[i].Timestamp == 0 {
			entries[i].Timestamp = now
		}
	}
}

// shipAppended sends an append's records at once to every follower that
// has been sent everything before them and has a free slot, framed from
// the entries as the log frames them: the followers' writes and fsyncs
// run beside the leader's own, not after it. A follower behind, or with
// no slot free, is sent them by the leader's goroutine from the log once
// they are acknowledgeable here. Called under amu (offsets in order).
func (l *Leader) shipAppended(first int64, entries []shardlog.Entry) {
	now := time.Now()
	l.fmu.Lock()
	defer l.fmu.Unlock()
	for _, r := range l.followers {
		if r.next != first || !r.prevOK || len(r.free) == 0 || now.Before(r.retry) {
			continue
		}
		m := wire.Replicate{Log: l.cfg.Ref, Generation: uint64(l.gen), First: first, PrevGen: uint64(r.prevGen),
			Commit: l.commit.Load()}
		buf, w := wire.BeginReplicate(l.buf[:0], 0, m)
		for i := range entries {
			e := &entries[i]
			buf = segment.AppendRecordParts(buf, first+int64(i), l.gen, e.Flags, e.Timestamp, e.Key, e.Value)
		}
		l.buf = w.Finish(buf)
		next := first + int64(len(entries))
		c := r.free[len(r.free)-1]
		c.Request, c.session, c.next = l.buf, r.session, next
		if l.cfg.Transport.Send(&c.Call) != nil {
			r.retry = now.Add(retryAfter)
			continue
		}
		r.free = r.free[:len(r.free)-1]
		r.inflight++
		r.next, r.prevGen = next, l.gen
	}
}
