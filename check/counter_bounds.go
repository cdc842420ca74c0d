package check

import "fmt"

// checkCounterBounds holds every counter read (an add's sum, a get's
// value) to at least once: it must lie between the least and the most
// that the adds which may have been applied before it can sum to.
//
// Each add contributes c times its delta, for c in a range:
//
//	the read's own add                    1 .. 1+retries
//	Ok, returned before the read began    1 .. 1+retries
//	invoked before the read returned      0 .. 1+retries (concurrent, or unknown:
//	                                      an unknown add may land at any time)
//	invoked after the read returned       0
//	failed                                0
func checkCounterBounds(r *Report, key string, ops []Op) {
	for _, x := range ops {
		if x.Outcome != Ok {
			continue
		}
		v := x.Output.(CounterOutput).Value
		lo, hi := sumBounds(x, ops)
		if v < lo || v > hi {
			r.add(CounterBounds, fmt.Sprintf("counter %q read %d, the adds that may precede it sum to %d..%d", key, v, lo, hi), x)
		}
	}
}

// sumBounds is the least and the most the adds of ops can sum to when x
// reads.
func sumBounds(x Op, ops []Op) (lo, hi int64) {
	for _, b := range ops {
		in := b.Input.(CounterInput)
		if in.Op != CounterAdd || b.Outcome == Fail {
			continue
		}
		most := int64(1 + in.Retries)
		var least int64
		switch {
		case b.ID == x.ID, b.Outcome == Ok && b.CompleteSeq < x.InvokeSeq:
			least = 1
		case b.InvokeSeq < x.CompleteSeq:
		default:
			most = 0
		}
		lo += min(least*in.Delta, most*in.Delta)
		hi += max(least*in.Delta, most*in.Delta)
	}
	return lo, hi
}
