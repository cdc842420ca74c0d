package group

// DescribeOpen describes every group of the shards whose groups are open
// here (a shard's groups open on first use), for metrics: unlike List it
// never opens a shard's group logs. Each description is taken as Describe
// takes it; the order is unspecified.
func (m *Manager) DescribeOpen() []Description {
	m.mu.RLock()
	shards := make([]*shardGroups, 0, len(m.shards))
	for _, sg := range m.shards {
		shards = append(shards, sg)
	}
	m.mu.RUnlock()
	var out []Description
	for _, sg := range shards {
		for _, name := range sg.names() {
			d, err := m.Describe(Key{Stream: sg.id, Shard: sg.shard.Index(), Group: name})
			if err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}
