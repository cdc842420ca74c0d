package sim

import (
	"errors"
	"fmt"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

const (
	clients = 4
	// opsMax bounds the operations of one run.
	opsMax = 600
	// opEvery is how often, on average, an idle client starts an
	// operation.
	opEvery = 80 * time.Millisecond
	// readShare is the share of operations that read.
	readShare = 0.15
	// staleShare is the share of operations sent to a broker drawn at
	// random rather than the one the store names leader (a client whose
	// routes are stale).
	staleShare   = 0.1
	readBytesMax = 1 << 20
)

func newDisk() *vfs.MemFS { return vfs.NewMem() }

func checkShard(i int) check.Shard { return check.Shard{Stream: "s", Index: uint32(i)} }

// workload is the simulated clients: each makes one operation at a time,
// a publish at the shard's leader (as the client believes it) or a read of
// its committed log from offset 0; in an engine run both through the
// broker's stream engine (engine_workload.go), beside the subscribers.
type workload struct {
	w     *World
	busy  [clients]bool
	ops   int
	value int
	subs  []*subscriber // an engine run's live readers (engine_subs.go)
}

func newWorkload(w *World) *workload { return &workload{w: w, subs: newSubscribers(w)} }

func (l *workload) step(time.Duration) {
	for c := range clients {
		if l.busy[c] || l.ops >= opsMax || l.w.rng.Float64() >= float64(stepDuration)/float64(opEvery) {
			continue
		}
		l.ops++
		if l.w.cfg.Engine {
			l.engineOp(c)
			continue
		}
		i := l.w.rng.IntN(len(l.w.cfg.Shards))
		b := l.w.leaderOf(i)
		if b == nil || l.w.rng.Float64() < staleShare {
			b = l.w.brokers[l.w.rng.IntN(len(l.w.brokers))]
		}
		if l.w.rng.Float64() < readShare {
			var ld *replica.Leader
			if b.up() {
				ld = b.node.Leader(shardID(i))
			}
			l.read(ld, i, b.id, c, false)
			continue
		}
		l.publish(c, i, b)
		synctest.Wait() // what the append set going settles before the next one starts
	}
	l.stepSubscribers()
}

// publish appends one record at b's leadership of shard i.
func (l *workload) publish(c, i int, b *broker) {
	w := l.w
	l.value++
	value := fmt.Sprintf("v%d", l.value)
	h := w.rec[i].Invoke(c, w.nowNs(), check.Publish{Shard: checkShard(i), Value: value})
	w.stats.Publishes++
	tag := fmt.Sprintf("op s%d/%d", i, h.ID())
	w.trace.add("%s p%d publish %s at %s", tag, c, value, b.id)
	if !b.up() {
		h.Fail(w.nowNs(), b.id+" is down")
		return
	}
	ld := b.node.Leader(shardID(i))
	if ld == nil {
		h.Fail(w.nowNs(), b.id+" does not lead")
		return
	}
	l.busy[c] = true
	wt := &ackWaiter{w: w, h: h, shard: i, broker: b.id, gen: uint64(ld.Generation()), tag: tag, done: func() { l.busy[c] = false }}
	first, err := ld.Append([]shardlog.Entry{{Value: []byte(value)}}, 0, wt)
	switch {
	case err != nil && errors.Is(err, replica.ErrNotLeader):
		l.busy[c] = false
		h.Fail(w.nowNs(), err.Error())
	case err != nil:
		l.busy[c] = false
		h.Unknown(w.nowNs(), err.Error())
	case w.cfg.Bug == BugAckBeforeQuorum:
		wt.early = true
		w.stats.Acked++
		h.Ok(w.nowNs(), check.Published{Offset: uint64(first)})
		w.trace.add("%s ok %d (before the quorum: injected bug)", tag, first)
	}
}

// ackWaiter is one publish's shardlog.Waiter: the leader calls it on its
// own goroutine once the append is acknowledged or refused. It records
// the broker's Ack at once (with the lease the grants delivered say it
// held) and hands the client's outcome to the simulator's goroutine.
type ackWaiter struct {
	w      *World
	h      check.Handle
	shard  int
	broker string
	gen    uint64
	tag    string
	early  bool // the injected bug completed the operation already
	done   func()
}

func (a *ackWaiter) Committed(first, _ int64, err error) {
	at := a.w.nowNs()
	if err == nil && !a.early {
		sent, ok := a.w.net.leaseOf(a.broker, a.shard, a.gen)
		ack := check.Ack{Shard: checkShard(a.shard), Broker: a.broker, Generation: a.gen, Offset: uint64(first), Time: at}
		if ok {
			ack.LeaseSent, ack.Lease = int64(sent.Sub(a.w.began)), int64(a.w.cfg.Lease)
		}
		a.w.rec[a.shard].Ack(ack)
	}
	a.w.inbox.put(a.tag, func() {
		a.done()
		switch {
		case a.early:
		case err == nil:
			a.w.stats.Acked++
			a.h.Ok(at, check.Published{Offset: uint64(first)})
			a.w.trace.add("%s ok %d gen %d by %s", a.tag, first, a.gen, a.broker)
		default:
			a.h.Unknown(at, err.Error())
			a.w.trace.add("%s unknown: %v", a.tag, err)
		}
	})
}

// beginRead records client c's read of shard i from offset 0 (the final
// one, or one of its own subscription) and returns it with its trace tag.
func (l *workload) beginRead(i, c int, final bool) (check.Handle, string) {
	sub := fmt.Sprintf("r%d", l.ops)
	if final {
		sub = "final"
	}
	h := l.w.rec[i].Invoke(c, l.w.nowNs(), check.Read{Shard: checkShard(i), Subscription: sub, From: 0, Final: final})
	return h, fmt.Sprintf("op s%d/%d", i, h.ID())
}

// read reads shard i's committed log from offset 0 at ld (nil: the broker
// does not lead it), as one subscription of one delivery.
func (l *workload) read(ld *replica.Leader, i int, broker string, c int, final bool) {
	w := l.w
	h, tag := l.beginRead(i, c, final)
	if ld == nil {
		h.Fail(w.nowNs(), broker+" does not lead")
		w.trace.add("%s read at %s: not leader", tag, broker)
		return
	}
	var out []check.Record
	var src interface {
		Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error)
	} = ld
	end := ld.Commit()
	if b := w.broker(broker); w.cfg.Bug == BugReadPastCommit && b.up() && b.logs[i] != nil {
		src, end = b.logs[i], b.logs[i].End()
	}
	for from := int64(0); from < end; {
		buf, next, err := src.Read(from, readBytesMax, nil)
		if err != nil || next <= from {
			h.Fail(w.nowNs(), fmt.Sprintf("reading at %d: %v", from, err))
			w.trace.add("%s read at %s failed at %d: %v", tag, broker, from, err)
			return
		}
		for it := segment.NewIter(buf); ; {
			rec, ok := it.Next()
			if !ok {
				break
			}
			if rec.Flags&replica.FlagGenerationStart == 0 && rec.Offset < end {
				out = append(out, check.Record{Offset: uint64(rec.Offset), Value: string(rec.Value)})
			}
		}
		from = next
	}
	w.stats.Reads++
	h.Ok(w.nowNs(), check.Delivered{Records: out})
	w.trace.add("%s read at %s: %d records", tag, broker, len(out))
}

// recordLogs records shard i's replicas' logs and the final leader's
// watermark (0 with no leader: nothing is claimed committed).
func (w *World) recordLogs(i int, ld *replica.Leader) {
	sl := check.ShardLogs{Shard: checkShard(i)}
	for _, b := range w.brokers {
		if !b.up() || b.logs[i] == nil {
			continue
		}
		entries := logEntries(b.logs[i])
		sl.Replicas = append(sl.Replicas, check.ReplicaLog{Broker: b.id, Entries: entries})
		if ld != nil && b.node.Leader(shardID(i)) == ld {
			sl.Final = entries
			sl.Watermark = uint64(ld.Commit())
		}
	}
	w.rec[i].Logs(sl)
}

// controlHash is the hash a LogEntry carries for a control record.
const controlHash = 0

func logEntries(l *shardlog.Log) []check.LogEntry {
	var out []check.LogEntry
	for from := l.Start(); from < l.End(); {
		buf, next, err := l.Read(from, readBytesMax, nil)
		if err != nil || next <= from {
			return out
		}
		for it := segment.NewIter(buf); ; {
			rec, ok := it.Next()
			if !ok {
				break
			}
			e := check.LogEntry{Offset: uint64(rec.Offset), Generation: uint64(rec.Generation), Hash: controlHash}
			if rec.Flags&replica.FlagGenerationStart == 0 {
				e.Hash = check.HashValue(string(rec.Value))
			}
			out = append(out, e)
		}
		from = next
	}
	return out
}
