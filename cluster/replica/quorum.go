package replica

// Watermark is the quorum watermark of a replica set: the majority-th
// highest of ends (the leader's own end among them), so that a majority of
// the replicas holds every record below it. With one replica it is that
// replica's end. It allocates nothing for a replica set of up to
// cluster.ReplicationFactorMax (7) and leaves ends as it found them.
func Watermark(ends []int64) int64 {
	if len(ends) == 0 {
		return 0
	}
	var room [8]int64
	sorted := room[:0]
	if len(ends) > len(room) {
		sorted = make([]int64, 0, len(ends))
	}
	for _, e := range ends { // insertion sort, highest first: a handful of values
		i := len(sorted)
		sorted = append(sorted, e)
		for ; i > 0 && sorted[i-1] < e; i-- {
			sorted[i] = sorted[i-1]
		}
		sorted[i] = e
	}
	return sorted[len(ends)/2]
}

// Majority is how many replicas of a set of n make a quorum.
func Majority(n int) int { return n/2 + 1 }
