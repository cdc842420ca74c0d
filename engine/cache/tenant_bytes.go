package cache

// TenantBytes is what tenant's caches hold here: the segments of each
// open shard's log and of its counters' log (on disk for a durable cache,
// in memory otherwise). A shard this broker does not hold counts nothing,
// even where its files are kept here for its return. It walks the tenant's caches, so a caller on a hot path keeps
// the figure and refreshes it now and then (netio.StoredBytes does).
func (s *Store) TenantBytes(tenant string) int64 {
	s.mu.RLock()
	var caches []*Cache
	for id, c := range s.caches {
		if id.Tenant == tenant {
			caches = append(caches, c)
		}
	}
	s.mu.RUnlock()
	var n int64
	for _, c := range caches {
		for i := range c.shards {
			if sh := c.held(i); sh != nil {
				n += sh.log().Stats().Bytes + sh.counters.logBytes()
			}
		}
	}
	return n
}

// logBytes is the size of the counters' log; 0 before the first add.
func (cs *counterSlot) logBytes() int64 {
	cs.mu.Lock()
	h := cs.logs
	cs.mu.Unlock()
	if h == nil {
		return 0
	}
	return h.Log().Stats().Bytes
}
