package group

import (
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
)

// The group logs of a Quorum stream's shard are its Quorum parts
// (engine/replication_part.go): what an operation appends to them is
// acknowledged once the part's quorum watermark passes it and the lease
// still holds (Part.Vouch), as the stream's records are.
//
//   - An ack, nack or reject (settle) returns once the cursor record and
//     the dead letters it appended are vouched for: with no majority in
//     the publish timeout it returns the part's refusal (wire code
//     no_quorum: the move may be stored; the records may be delivered
//     again, never lost). Its effect on the group in memory stays, as a
//     Leader-level write's does when its log later fails.
//   - A dead letter holds the cursor until it is vouched for (its
//     deadCommit is told only then), so the cursor never passes a record
//     whose dead letter a failover could take back.
//   - A group's creation (appendWait) returns once vouched for.
//
// What is appended while the group's lock is held is noted on the group
// (noteQuorum) and waited for after it is let go of (awaitQuorum), so a
// slow majority holds up that caller only.

// quorumWait is what one operation waits for: the last record it
// appended to each group log, with the part and generation it went at.
type quorumWait struct {
	part [2]engine.Part
	gen  [2]uint32
	last [2]int64
}

// noteQuorum records that l's record at last, which the group's operation
// appended, is to be vouched for before the operation returns. g.mu and
// sg.mu (read) held: the generation is the one the groups were built at,
// which the append went at.
func (g *group) noteQuorum(l *groupLog, last int64) {
	sg := g.sg
	if !sg.quorum {
		return
	}
	p := l.held.Load()
	if p == nil {
		return
	}
	i := 0
	if l == sg.deadLog {
		i = 1
	}
	g.quorum.part[i], g.quorum.gen[i], g.quorum.last[i] = p.Part, sg.gen, last
}

// await waits until every record q names is vouched for.
func (q *quorumWait) await() error {
	var w waitChan
	for i, p := range q.part {
		if p == nil {
			continue
		}
		if w == nil {
			w = make(waitChan, 1)
		}
		p.Vouch(q.gen[i], q.last[i], q.last[i], w)
		if err := <-w; err != nil {
			return err
		}
	}
	return nil
}

// vouchWaiter tells w once the records its log acknowledged are vouched
// for by the part they were appended to.
type vouchWaiter struct {
	p   engine.Part
	gen uint32
	w   shardlog.Waiter
}

func (v *vouchWaiter) Committed(first, last int64, err error) {
	if err != nil {
		v.w.Committed(first, last, err)
		return
	}
	v.p.Vouch(v.gen, first, last, v.w)
}
