package cluster

// load counts, per replica, the shards it leads and the shards it holds,
// across every stream and cache, as decided (not as stored): the next
// placement reads it to spread leaders and replicas evenly. It is keyed by
// replica, not broker, so a broker back on a new disk starts from zero.
type load struct {
	leaders  map[Replica]int
	replicas map[Replica]int
}

func newLoad() load {
	return load{leaders: map[Replica]int{}, replicas: map[Replica]int{}}
}

func (l *load) add(a Assignment)    { l.shift(a, 1) }
func (l *load) remove(a Assignment) { l.shift(a, -1) }

func (l *load) shift(a Assignment, by int) {
	if a.Leader != (Replica{}) {
		bump(l.leaders, a.Leader, by)
	}
	for _, r := range a.Replicas {
		bump(l.replicas, r, by)
	}
}

// bump adds by to counts[r], dropping entries that reach zero so the maps
// hold only replicas that carry something.
func bump(counts map[Replica]int, r Replica, by int) {
	n := counts[r] + by
	if n < 0 {
		panic("felix/cluster: bug: a load count went below zero for " + r.String())
	}
	if n == 0 {
		delete(counts, r)
		return
	}
	counts[r] = n
}
