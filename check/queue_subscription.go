package check

import (
	"fmt"
	"slices"
)

// checkSubscriptions: each subscription delivers offsets in increasing
// order, and skips none it was owed that is known to hold a record.
//
// An offset is known to hold a record when an acknowledgement or a read
// saw one there: an offset nobody saw holding a record (a control record,
// a record never acknowledged nor read) is not owed, and neither is one
// Options.Absent declares (retention, compaction).
func checkSubscriptions(r *Report, s Shard, q *shardQueue, o Options) {
	var known []uint64
	for _, off := range sortedKeys(q.seen) {
		if o.Absent == nil || !o.Absent(s, off) {
			known = append(known, off)
		}
	}
	for _, name := range sortedKeys(q.subs) {
		checkSubscription(r, s, q.subs[name], known)
	}
}

func checkSubscription(r *Report, s Shard, sub *subscription, known []uint64) {
	next, prev, any := sub.from, uint64(0), false
	var prevOp Op
	for _, op := range sub.reads {
		for _, rec := range op.Output.(Delivered).Records {
			if any && rec.Offset <= prev {
				r.add(NonmonotonicPoll, fmt.Sprintf("shard %s sub %q: offset %d delivered after %d", s, sub.name, rec.Offset, prev),
					prevOp, op)
				continue
			}
			if skipped, ok := firstIn(known, next, rec.Offset); ok {
				what := fmt.Sprintf("shard %s sub %q: offset %d delivered after %d, skipping %d", s, sub.name, rec.Offset, prev, skipped)
				if !any {
					what = fmt.Sprintf("shard %s sub %q: offset %d delivered first, owed from %d, skipping %d", s, sub.name, rec.Offset, sub.from, skipped)
				}
				r.add(PollSkip, what, op)
			}
			next, prev, any, prevOp = rec.Offset+1, rec.Offset, true, op
		}
	}
}

// firstIn is the first of the sorted offsets in [from, to).
func firstIn(sorted []uint64, from, to uint64) (uint64, bool) {
	i, _ := slices.BinarySearch(sorted, from)
	if i < len(sorted) && sorted[i] < to {
		return sorted[i], true
	}
	return 0, false
}
