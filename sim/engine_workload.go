package sim

import (
	"context"
	"errors"
	"fmt"
	"testing/synctest"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment"
)

const (
	// engineKeys is how many routing keys the clients publish under in an
	// engine run; a publish of no key (unkeyedShare of them) goes to shard
	// 0, as the engine routes it.
	engineKeys   = 8
	unkeyedShare = 0.3
	// batchMax bounds the records of one publish: one key (or none) for
	// all, so one shard and one acknowledgement.
	batchMax = 3
)

// polled is an already cancelled context: Subscription.Next with it hands
// over what is queued (or the history it catches up on) and never waits,
// so a subscription is read on the simulator's goroutine, at the instants
// the seed chooses, and what one read delivers is what the shard's
// committers had handed it by then, whatever the scheduler did.
var polled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// engineOp starts client c's next operation in an engine run: a publish
// through the engine's publish path of one to batchMax records under one
// routing key or none, at the broker the client believes leads the shard
// the key chooses, or a read of a shard from offset 0 through a
// subscription of its own.
func (l *workload) engineOp(c int) {
	w := l.w
	if w.rng.Float64() < readShare {
		i := w.rng.IntN(len(w.cfg.Shards))
		l.engineRead(l.route(i), i, c, false)
		return
	}
	var key []byte
	if w.rng.Float64() >= unkeyedShare {
		key = fmt.Appendf(nil, "k%d", w.rng.IntN(engineKeys))
	}
	i := engine.ShardFor(key, len(w.cfg.Shards))
	l.enginePublish(c, i, l.route(i), key, 1+w.rng.IntN(batchMax))
	synctest.Wait() // what the append set going settles before the next one starts
}

// route is the broker a client sends shard i's operation to: the one the
// store names its leader, or (a stale route) one drawn at random.
func (l *workload) route(i int) *broker {
	b := l.w.leaderOf(i)
	if b == nil || l.w.rng.Float64() < staleShare {
		b = l.w.brokers[l.w.rng.IntN(len(l.w.brokers))]
	}
	return b
}

// enginePublish publishes n records under key (to shard i, which it
// chooses) through b's engine: Stream.Publish, as the server calls it, its
// acknowledgement told to a PublishWaiter on the leadership's goroutine.
// Each record is one check.Publish.
func (l *workload) enginePublish(c, i int, b *broker, key []byte, n int) {
	w := l.w
	recs := make([]engine.Record, n)
	hs := make([]check.Handle, n)
	values := make([]string, n)
	for k := range recs {
		l.value++
		values[k] = fmt.Sprintf("v%d", l.value)
		recs[k] = engine.Record{Key: key, Value: []byte(values[k])}
		hs[k] = w.rec[i].Invoke(c, w.nowNs(), check.Publish{Shard: checkShard(i), Value: values[k]})
		w.stats.Publishes++
	}
	tag := fmt.Sprintf("op s%d/%d", i, hs[0].ID())
	w.trace.add("%s p%d publish %v key %q at %s", tag, c, values, key, b.id)
	fail := func(outcome func(check.Handle, string), why string) {
		for _, h := range hs {
			outcome(h, why)
		}
	}
	failAll := func(why string) { fail(func(h check.Handle, s string) { h.Fail(w.nowNs(), s) }, why) }
	if !b.up() || b.engine == nil {
		failAll(b.id + " is down")
		return
	}
	st, err := b.engine.Stream(streamID)
	if err != nil {
		failAll(err.Error())
		return
	}
	// The generation the engine's append goes to: the adapter's leadership
	// of the shard, which its Append takes (nil: it refuses).
	var gen uint64
	if ld := b.reps.StreamLeader(shardID(i)); ld != nil {
		gen = uint64(ld.Generation())
	}
	l.busy[c] = true
	pw := &publishWaiter{w: w, hs: hs, shard: i, broker: b.id, gen: gen, tag: tag, done: func() { l.busy[c] = false }}
	switch err := st.Publish(recs, pw); {
	case err == nil:
	case errors.Is(err, engine.ErrNotLeader):
		l.busy[c] = false
		failAll(err.Error())
		w.trace.add("%s refused: %v", tag, err)
	default:
		l.busy[c] = false
		fail(func(h check.Handle, s string) { h.Unknown(w.nowNs(), s) }, err.Error())
		w.trace.add("%s unknown: %v", tag, err)
	}
}

// publishWaiter is one publish's engine.PublishWaiter: the engine tells
// it on the leadership's goroutine once the records are acknowledged at
// the stream's consistency and fsync, or refused. It records the broker's
// Ack of each record at once (with the lease the grants delivered say it
// held, as ackWaiter does) and hands the client's outcome to the
// simulator's goroutine.
type publishWaiter struct {
	w      *World
	hs     []check.Handle
	shard  int
	broker string
	gen    uint64
	tag    string
	done   func()
}

func (p *publishWaiter) Published(runs []engine.AckRun, err error) {
	at := p.w.nowNs()
	var first int64 = -1
	if err == nil && len(runs) == 1 && runs[0].Shard == p.shard && runs[0].Count == len(p.hs) {
		first = runs[0].First
		sent, ok := p.w.net.leaseOf(p.broker, p.shard, p.gen)
		for k := range p.hs {
			ack := check.Ack{Shard: checkShard(p.shard), Broker: p.broker, Generation: p.gen, Offset: uint64(first) + uint64(k), Time: at}
			if ok {
				ack.LeaseSent, ack.Lease = int64(sent.Sub(p.w.began)), int64(p.w.cfg.Lease)
			}
			p.w.rec[p.shard].Ack(ack)
		}
	} else if err == nil {
		err = fmt.Errorf("felix/sim: acknowledged as %v, not one run of %d records on shard %d", runs, len(p.hs), p.shard)
	}
	p.w.inbox.put(p.tag, func() {
		p.done()
		if err != nil {
			for _, h := range p.hs {
				h.Unknown(at, err.Error())
			}
			p.w.trace.add("%s unknown: %v", p.tag, err)
			return
		}
		for k, h := range p.hs {
			h.Ok(at, check.Published{Offset: uint64(first) + uint64(k)})
		}
		p.w.stats.Acked += len(p.hs)
		p.w.trace.add("%s ok %d..%d gen %d by %s", p.tag, first, first+int64(len(p.hs))-1, p.gen, p.broker)
	})
}

// engineRead reads shard i at b from offset 0 to its end through a
// subscription of its own (UntilEnd), as one delivery: at a broker that
// does not lead the shard it is refused, as the server refuses a
// subscribe there. It reports whether the read was made.
func (l *workload) engineRead(b *broker, i int, c int, final bool) bool {
	w := l.w
	h, tag := l.beginRead(i, c, final)
	s, err := subscribeAt(b, i, engine.SubscribeOptions{Start: engine.StartOffset, Offset: 0, UntilEnd: true, End: -1})
	if err != nil {
		h.Fail(w.nowNs(), err.Error())
		w.trace.add("%s read at %s: %v", tag, b.id, err)
		return false
	}
	defer s.Close()
	var out []check.Record
	for {
		buf, err := s.Next(polled, nil, readBytesMax)
		out = appendRecords(out, buf)
		if errors.Is(err, engine.ErrEndReached) {
			break
		}
		if err != nil {
			h.Fail(w.nowNs(), err.Error())
			w.trace.add("%s read at %s failed after %d records: %v", tag, b.id, len(out), err)
			return false
		}
	}
	w.stats.Reads++
	h.Ok(w.nowNs(), check.Delivered{Records: out})
	w.trace.add("%s read at %s: %d records", tag, b.id, len(out))
	return true
}

// subscribeAt subscribes to shard i at b's engine, as the server's
// SUBSCRIBE does: refused where b does not lead the shard.
func subscribeAt(b *broker, i int, opts engine.SubscribeOptions) (*engine.Subscription, error) {
	if !b.up() || b.engine == nil {
		return nil, errors.New(b.id + " is down")
	}
	st, err := b.engine.Stream(streamID)
	if err != nil {
		return nil, err
	}
	sh, err := st.Shard(i)
	if err != nil {
		return nil, err
	}
	if local, leader := b.engine.Owner().Leader(streamID, i); !local {
		return nil, &engine.NotLeaderError{Stream: streamID, Shard: i, Leader: leader}
	}
	return sh.Subscribe(opts)
}

// appendRecords appends the records (not the control records) framed in
// buf to out.
func appendRecords(out []check.Record, buf []byte) []check.Record {
	for it := segment.NewIter(buf); ; {
		rec, ok := it.Next()
		if !ok {
			return out
		}
		if rec.Flags&segment.FlagControl == 0 {
			out = append(out, check.Record{Offset: uint64(rec.Offset), Value: string(rec.Value)})
		}
	}
}
