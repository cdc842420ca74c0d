package group

import "github.com/felixbroker/felix/engine"

// LogEnds is where a shard's two group logs end on this broker, if they
// are open here: a replicated shard's are on every replica once held
// (HoldReplicas), a follower's moving as its leader's records arrive;
// another shard's once an operation named it. changed is closed the next
// time either log makes records visible, so a caller waits for an end on
// it (take it, look, wait) rather than polling. ErrNotFound when the logs
// are not open here. Safe for concurrent use.
func (m *Manager) LogEnds(id engine.StreamID, shard int) (cursors, dead int64, changed <-chan struct{}, err error) {
	s, err := m.eng.Stream(id)
	if err != nil {
		return 0, 0, nil, err
	}
	sh, err := s.Shard(shard)
	if err != nil {
		return 0, 0, nil, err
	}
	m.mu.RLock()
	sg := m.shards[sh]
	m.mu.RUnlock()
	if sg == nil {
		return 0, 0, nil, ErrNotFound
	}
	changed = sg.visible.wait() // before the ends: a record made visible in between still closes it
	return sg.cursors.log().End(), sg.deadLog.log().End(), changed, nil
}
