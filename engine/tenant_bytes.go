package engine

// TenantBytes is what a tenant's open streams hold: for each shard open
// here (the files a shard no longer held left on disk are not counted), the
// bytes in its log's segments when it is durable, the records it keeps in
// memory otherwise. It takes the stream table's read lock, then each log's
// own briefly; meant for a quota refreshed every so often, not for every
// publish.
func (e *Engine) TenantBytes(tenant string) int64 {
	e.mu.RLock()
	var streams []*Stream
	for id, s := range e.streams {
		if id.Tenant == tenant {
			streams = append(streams, s)
		}
	}
	e.mu.RUnlock()
	var n int64
	for _, s := range streams {
		for sh := range s.openShards() {
			n += sh.storedBytes()
		}
	}
	return n
}

// storedBytes is the size of the shard's log.
func (sh *Shard) storedBytes() int64 {
	switch l := sh.log.(type) {
	case *diskLog:
		return l.current().Stats().Bytes
	case *memLog:
		return l.heldBytes()
	}
	return 0
}

// heldBytes is what the memory log holds.
func (m *memLog) heldBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(m.bytes)
}
