package check

import (
	"math/rand/v2"
	"slices"
)

// mutations inject each kind of anomaly into a valid history.
var mutations = []mutation{
	{LostWrite, func(h *History, rng *rand.Rand) bool {
		// An acknowledged value read by nobody, a later one read.
		i, ok := ackedRead(h, rng)
		if !ok {
			return false
		}
		p, off := h.Ops[i].Input.(Publish), h.Ops[i].Output.(Published).Offset
		if !readAbove(h, p.Shard, off) {
			return false
		}
		dropValue(h, p.Value, func(Op) bool { return true })
		return true
	}},
	{Unseen, func(h *History, rng *rand.Rand) bool {
		i, ok := ackedRead(h, rng)
		if ok {
			dropValue(h, h.Ops[i].Input.(Publish).Value, isFinal)
		}
		return ok
	}},
	{InconsistentOffsets, func(h *History, rng *rand.Rand) bool {
		// Another value read where an acknowledged one is.
		i, ok := ackedRead(h, rng)
		if !ok {
			return false
		}
		p, off := h.Ops[i].Input.(Publish), h.Ops[i].Output.(Published).Offset
		appendOp(h, Publish{Shard: p.Shard, Value: "intruder"}, Unknown, nil)
		appendOp(h, Read{Shard: p.Shard, Subscription: "intruded", From: off}, Ok,
			Delivered{Records: []Record{{Offset: off, Value: "intruder"}}})
		return true
	}},
	{Duplicate, func(h *History, rng *rand.Rand) bool {
		// A value read again far past the end.
		i, ok := lastFinalRead(h)
		if ok {
			d := h.Ops[i].Output.(Delivered)
			h.Ops[i].Output = Delivered{Records: append(d.Records, Record{Offset: 1 << 40, Value: d.Records[0].Value})}
		}
		return ok
	}},
	{AbortedRead, func(h *History, rng *rand.Rand) bool {
		i, ok := ackedRead(h, rng)
		if ok {
			h.Ops[i].Outcome, h.Ops[i].Output = Fail, nil
		}
		return ok
	}},
	{Unexpected, func(h *History, rng *rand.Rand) bool {
		i, ok := lastFinalRead(h)
		if ok {
			d := h.Ops[i].Output.(Delivered)
			h.Ops[i].Output = Delivered{Records: append(d.Records, Record{Offset: 1 << 40, Value: "ghost"})}
		}
		return ok
	}},
	{PollSkip, func(h *History, rng *rand.Rand) bool {
		// A final read drops an acknowledged record that is not its last.
		acked := map[string]bool{}
		for _, op := range h.Ops {
			if p, ok := op.Input.(Publish); ok && op.Outcome == Ok {
				acked[p.Value] = true
			}
		}
		i, ok := pick(rng, len(h.Ops), func(i int) bool {
			recs := deliveredBy(h.Ops[i])
			return isFinal(h.Ops[i]) && len(recs) > 1 && acked[recs[0].Value]
		})
		if ok {
			d := h.Ops[i].Output.(Delivered)
			h.Ops[i].Output = Delivered{Records: d.Records[1:]}
		}
		return ok
	}},
	{NonmonotonicPoll, func(h *History, rng *rand.Rand) bool {
		i, ok := lastFinalRead(h)
		if ok {
			d := h.Ops[i].Output.(Delivered)
			h.Ops[i].Output = Delivered{Records: append(d.Records, d.Records[0])}
		}
		return ok
	}},
	{DoubleAck, func(h *History, rng *rand.Rand) bool {
		if len(h.Acks) == 0 {
			return false
		}
		a := h.Acks[rng.IntN(len(h.Acks))]
		a.Broker = "b2"
		h.Acks = append(h.Acks, a)
		return true
	}},
	{LateAck, func(h *History, rng *rand.Rand) bool {
		if len(h.Acks) == 0 {
			return false
		}
		a := &h.Acks[rng.IntN(len(h.Acks))]
		a.Time = a.LeaseSent + 3*a.Lease/4 + 1
		return true
	}},
	{AckAfterPromotion, func(h *History, rng *rand.Rand) bool {
		// The control plane began replacing the acknowledging leader at the
		// ack's time or a moment before.
		if len(h.Acks) == 0 {
			return false
		}
		a := h.Acks[rng.IntN(len(h.Acks))]
		h.Promotions = append(h.Promotions, Promotion{Shard: a.Shard, Generation: a.Generation + 1, Time: a.Time - int64(rng.IntN(2))})
		return true
	}},
	{ReplicaDivergence, func(h *History, rng *rand.Rand) bool {
		i, ok := pick(rng, len(h.Logs), func(i int) bool { return h.Logs[i].Watermark > 0 })
		if ok {
			e := h.Logs[i].Replicas[1].Entries
			e[rng.IntN(int(h.Logs[i].Watermark))].Hash ^= 1
		}
		return ok
	}},
	{RolledBackRead, func(h *History, rng *rand.Rand) bool {
		i, ok := pick(rng, len(h.Ops), func(i int) bool { return len(deliveredBy(h.Ops[i])) > 0 })
		if !ok {
			return false
		}
		rec, s := deliveredBy(h.Ops[i])[0], h.Ops[i].Input.(Read).Shard
		for _, l := range h.Logs {
			if l.Shard == s {
				l.Final[rec.Offset].Hash ^= 1
			}
		}
		return true
	}},
	{CacheNonlinearizable, func(h *History, rng *rand.Rand) bool {
		i, ok := okOp(h, rng, func(in Input) bool { kv, ok := in.(KVInput); return ok && kv.Op == KVGet })
		if ok {
			h.Ops[i].Output = KVOutput{Found: true, Value: "never written"}
		}
		return ok
	}},
	{CounterNonlinearizable, func(h *History, rng *rand.Rand) bool {
		i, ok := okOp(h, rng, func(in Input) bool { c, ok := in.(CounterInput); return ok && c.Key == "n" })
		if ok {
			h.Ops[i].Output = CounterOutput{Value: -1} // every delta is positive
		}
		return ok
	}},
	{CursorNonlinearizable, func(h *History, rng *rand.Rand) bool {
		i, ok := okOp(h, rng, func(in Input) bool { c, ok := in.(CursorInput); return ok && c.Op == CursorGet })
		if ok {
			h.Ops[i].Output = CursorOutput{Offset: 1 << 40}
		}
		return ok
	}},
	{CounterBounds, func(h *History, rng *rand.Rand) bool {
		i, ok := okOp(h, rng, func(in Input) bool { c, ok := in.(CounterInput); return ok && c.Key == "retried" })
		if ok {
			h.Ops[i].Output = CounterOutput{Value: 1 << 40}
		}
		return ok
	}},
}

// readAbove is true when some read delivered a record of the shard above
// off.
func readAbove(h *History, s Shard, off uint64) bool {
	return slices.ContainsFunc(h.Ops, func(op Op) bool {
		in, ok := op.Input.(Read)
		return ok && in.Shard == s && slices.ContainsFunc(deliveredBy(op), func(r Record) bool { return r.Offset > off })
	})
}
