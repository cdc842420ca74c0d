package replica

import "github.com/felixbroker/felix/engine/shardlog"

// Log is what replication needs of a shard's local log; *shardlog.Log
// implements it. A follower's log takes AppendAt only (from the Follower,
// one batch at a time) and Truncate only from the Follower's
// synchronisation, never concurrently with an append.
type Log interface {
	Append(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (int64, error)
	AppendAt(first int64, prevGen uint32, entries []shardlog.Entry, gen uint32, w shardlog.Waiter) error
	Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error)
	Start() int64
	End() int64     // acknowledgeable end at the log's FsyncMode (visible)
	Durable() int64 // fsynced end
	LastGeneration() uint32
	GenerationEnd(gen uint32) int64
	Truncate(offset int64) error
}

var _ Log = (*shardlog.Log)(nil)

// recoveryReporter is the optional part of a Log that says what its
// recovery found: a FENCE_OK is marked clean only when it cut nothing.
// A Log without it is taken as clean.
type recoveryReporter interface {
	Recovery() shardlog.RecoveryInfo
}

var _ recoveryReporter = (*shardlog.Log)(nil)

// nextOffset is the offset the log's next appended record gets, appends
// queued but not yet acknowledged included: no record has a generation
// above the largest u32, so the end of that generation is the log's end.
func nextOffset(l Log) int64 { return l.GenerationEnd(^uint32(0)) }
