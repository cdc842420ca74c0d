package check

import (
	"fmt"
	"slices"
	"strings"
)

// checkQueues runs every queue check on every shard.
func checkQueues(r *Report, ops []Op, o Options) {
	shards := indexQueues(ops, &r.Stats)
	for _, s := range sortedShards(shards) {
		q := shards[s]
		checkReadValues(r, s, q)
		checkOffsets(r, s, q, o)
		checkAcknowledged(r, s, q)
		checkSubscriptions(r, s, q, o)
	}
}

// checkReadValues: every value read was published on the shard, by a
// publish that may have happened.
func checkReadValues(r *Report, s Shard, q *shardQueue) {
	for _, v := range sortedKeys(q.readBy) {
		read, pubs := q.readBy[v], q.publishes[v]
		switch {
		case len(pubs) == 0:
			r.add(Unexpected, fmt.Sprintf("shard %s: %q read, never published there", s, v), read)
		case !slices.ContainsFunc(pubs, Op.mayHaveHappened):
			r.add(AbortedRead, fmt.Sprintf("shard %s: %q read, its publish definitely failed", s, v), append(pubs[:1:1], read)...)
		}
	}
}

// checkOffsets: one value at each offset, and one offset for each value.
func checkOffsets(r *Report, s Shard, q *shardQueue, o Options) {
	for _, off := range sortedKeys(q.seen) {
		at := q.seen[off]
		if len(at) < 2 {
			continue
		}
		var values []string
		var involved []Op
		for _, v := range sortedKeys(at) {
			values = append(values, fmt.Sprintf("%q", v))
			involved = append(involved, at[v][0])
		}
		r.add(InconsistentOffsets, fmt.Sprintf("shard %s offset %d holds %s", s, off, strings.Join(values, " and ")), involved...)
	}
	if o.ReusedValues {
		return
	}
	for _, v := range sortedKeys(q.offsetsOf) {
		offs := q.offsetsOf[v]
		if len(offs) < 2 {
			continue
		}
		var involved []Op
		for _, off := range sortedKeys(offs) {
			involved = append(involved, q.seen[off][v][0])
		}
		r.add(Duplicate, fmt.Sprintf("shard %s: %q seen at offsets %v", s, v, sortedKeys(offs)), involved...)
	}
}

// checkAcknowledged: every acknowledged publish is read (else lost, when
// a subscription owed it read past it) and is in the final reads.
func checkAcknowledged(r *Report, s Shard, q *shardQueue) {
	for _, v := range sortedKeys(q.publishes) {
		for _, p := range q.publishes[v] {
			if p.Outcome != Ok {
				continue
			}
			off := p.Output.(Published).Offset
			if _, read := q.readBy[v]; !read {
				if past := q.readPast(off); past != nil {
					r.add(LostWrite, fmt.Sprintf("shard %s: %q acknowledged at %d, never read; sub %q read up to %d",
						s, v, off, past.name, past.top), p, past.reads[len(past.reads)-1])
				}
			}
			if q.final && off >= q.finalFrom && !q.finalRead[v] {
				r.add(Unseen, fmt.Sprintf("shard %s: %q acknowledged at %d, not in the final reads", s, v, off), p)
			}
		}
	}
}

// readPast is a subscription owed offset off that delivered a record above
// it, or nil.
func (q *shardQueue) readPast(off uint64) *subscription {
	for _, name := range sortedKeys(q.subs) {
		if sub := q.subs[name]; sub.from <= off && sub.any && sub.top > off {
			return sub
		}
	}
	return nil
}
