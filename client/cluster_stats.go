package client

// ClusterStats are a cluster client's counters.
type ClusterStats struct {
	// Brokers are the addresses the client will try, seeds first.
	Brokers []string
	// InUse is the broker unrouted requests go to ("" before one answered).
	InUse string
	// Routes counts the shards whose leader the client knows.
	Routes int
	// PerBroker are the counters of each broker's Client the client has
	// made, by address.
	PerBroker map[string]Stats
}

// Stats returns the client's counters.
func (c *ClusterClient) Stats() ClusterStats {
	c.mu.Lock()
	st := ClusterStats{Brokers: append([]string(nil), c.brokers...), InUse: c.inUse, Routes: len(c.routes),
		PerBroker: make(map[string]Stats, len(c.clients))}
	clients := make(map[string]*Client, len(c.clients))
	for a, cl := range c.clients {
		clients[a] = cl
	}
	c.mu.Unlock()
	for a, cl := range clients {
		st.PerBroker[a] = cl.Stats()
	}
	return st
}
