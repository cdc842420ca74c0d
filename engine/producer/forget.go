package producer

import "github.com/felixbroker/felix/engine"

// shardWatch forgets every producer's state for one open shard when that
// shard stops here (engine.Shard.Attach): released to another broker,
// its stream deleted, the engine closing. Should this broker hold and lead
// the shard again, it opens a new *engine.Shard, whose log may hold what
// another leader wrote meanwhile; a re-sent batch must then be unknown,
// never answered from memory of the old log.
type shardWatch struct {
	m     *Manager
	s     *engine.Stream
	shard int
	sh    *engine.Shard
}

// Close is the shard's stop: forget its producers.
func (w *shardWatch) Close() error {
	w.m.watched.Delete(w.sh)
	w.m.ForgetShard(w.s, w.shard)
	return nil
}

// watch attaches a shardWatch to sh once. After the first batch of a shard
// it is one lookup in a sync.Map, allocation-free.
func (m *Manager) watch(s *engine.Stream, shard int, sh *engine.Shard) {
	if _, ok := m.watched.Load(sh); ok {
		return
	}
	w := &shardWatch{m: m, s: s, shard: shard, sh: sh}
	if _, loaded := m.watched.LoadOrStore(sh, w); loaded {
		return
	}
	if err := sh.Attach(w); err != nil { // it stopped already: nothing to watch
		m.watched.Delete(sh)
	}
}
