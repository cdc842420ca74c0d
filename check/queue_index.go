package check

import (
	"cmp"
	"maps"
	"slices"
)

// shardQueue is what a history says of one shard's records: every
// publish, every place a value was seen, every subscription.
type shardQueue struct {
	publishes map[string][]Op            // value -> its publishes
	seen      map[uint64]map[string][]Op // offset -> value -> the ops that saw it there
	offsetsOf map[string]map[uint64]bool // value -> the offsets it was seen at
	readBy    map[string]Op              // value -> the first read that delivered it
	finalRead map[string]bool            // values the final reads delivered
	final     bool                       // a final read completed
	finalFrom uint64                     // the lowest From of the final reads
	subs      map[string]*subscription
}

// subscription is one subscription's reads, in the order they completed.
type subscription struct {
	name  string
	from  uint64
	reads []Op
	top   uint64 // the highest offset it delivered
	any   bool   // it delivered a record
}

func newShardQueue() *shardQueue {
	return &shardQueue{publishes: map[string][]Op{}, seen: map[uint64]map[string][]Op{},
		offsetsOf: map[string]map[uint64]bool{}, readBy: map[string]Op{}, finalRead: map[string]bool{},
		subs: map[string]*subscription{}}
}

// indexQueues sorts a history's publishes and reads by shard.
func indexQueues(ops []Op, st *Stats) map[Shard]*shardQueue {
	shards := map[Shard]*shardQueue{}
	of := func(s Shard) *shardQueue {
		q := shards[s]
		if q == nil {
			q = newShardQueue()
			shards[s] = q
		}
		return q
	}
	for _, op := range ops {
		switch in := op.Input.(type) {
		case Publish:
			st.Publishes++
			q := of(in.Shard)
			q.publishes[in.Value] = append(q.publishes[in.Value], op)
			if op.Outcome == Ok {
				st.Acknowledged++
				q.observe(op.Output.(Published).Offset, in.Value, op)
			}
		case Read:
			if op.Outcome == Ok {
				st.Reads++
				st.Records += len(op.Output.(Delivered).Records)
				of(in.Shard).addRead(in, op)
			}
		}
	}
	for _, q := range shards {
		for _, s := range q.subs {
			slices.SortStableFunc(s.reads, func(a, b Op) int { return cmp.Compare(a.CompleteSeq, b.CompleteSeq) })
		}
	}
	return shards
}

func (q *shardQueue) observe(offset uint64, value string, op Op) {
	at := q.seen[offset]
	if at == nil {
		at = map[string][]Op{}
		q.seen[offset] = at
	}
	if ops := at[value]; len(ops) == 0 || ops[len(ops)-1].ID != op.ID {
		at[value] = append(ops, op)
	}
	if q.offsetsOf[value] == nil {
		q.offsetsOf[value] = map[uint64]bool{}
	}
	q.offsetsOf[value][offset] = true
}

func (q *shardQueue) addRead(in Read, op Op) {
	s := q.subs[in.Subscription]
	if s == nil {
		s = &subscription{name: in.Subscription, from: in.From}
		q.subs[in.Subscription] = s
	}
	s.reads = append(s.reads, op)
	if in.Final {
		if !q.final || in.From < q.finalFrom {
			q.finalFrom = in.From
		}
		q.final = true
	}
	for _, rec := range op.Output.(Delivered).Records {
		q.observe(rec.Offset, rec.Value, op)
		if _, ok := q.readBy[rec.Value]; !ok {
			q.readBy[rec.Value] = op
		}
		if in.Final {
			q.finalRead[rec.Value] = true
		}
		if !s.any || rec.Offset > s.top {
			s.top, s.any = rec.Offset, true
		}
	}
}

// sortedKeys are a map's keys in order: every check walks maps this way,
// so that a history always gives the same examples.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

func sortedShards[V any](m map[Shard]V) []Shard {
	return slices.SortedFunc(maps.Keys(m), func(a, b Shard) int {
		return cmp.Or(cmp.Compare(a.Stream, b.Stream), cmp.Compare(a.Index, b.Index))
	})
}
