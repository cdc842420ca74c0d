package engine

// A durable shard goes offline when its log finds a damaged record after
// it opened (the background verification of its sealed segments, or a read
// that got there first): the log then refuses every read and append with an
// error matching shardlog.ErrOffline that carries the
// *segment.CorruptionError naming the file and the byte. The shard ends its
// subscriptions with that error, wakes its Changed waiters, and refuses new
// subscriptions and attachments with it (Err returns it), so nobody waits
// for records that will not come and nobody is served past the damage. The
// stream's other shards, and every other stream, go on. The shard keeps its
// place in the stream (publishes routed to it fail) until the engine
// closes or Reconcile stops it (no longer held); opening the engine again
// after the file is repaired serves it. Reconcile does not reopen an
// offline shard: its slot is not empty.

// goOffline is the shard log's OnOffline. It runs once, on the goroutine
// that found the damage, with no log lock held and no engine lock: the
// engine never reads a log while holding subMu.
func (sh *Shard) goOffline(err error) {
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	if sh.closed != nil {
		return
	}
	sh.endLocked(err)
}
