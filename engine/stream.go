package engine

import (
	"errors"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// Stream is an open stream: its catalog entry and its shards.
type Stream struct {
	engine *Engine
	info   StreamInfo
	// slots has one entry per configured shard, so routing never depends
	// on what this broker holds. An entry is nil while the shard is not
	// held here (Options.Placement), or its log failed to open; only the
	// engine's layout changes (Engine.layout held) store into it, and
	// every reader loads it without a lock: a publish takes none.
	slots []atomic.Pointer[Shard]
}

// Info is the stream's catalog entry.
func (s *Stream) Info() StreamInfo { return s.info }

// ID is the stream's name.
func (s *Stream) ID() StreamID { return s.info.ID }

// Shards is the number of shards the stream has, held here or not.
func (s *Stream) Shards() int { return len(s.slots) }

// Shard returns shard i; ErrNoShard when the stream has no such shard, and
// a *NotLeaderError naming the leader Ownership knows when this broker does
// not hold it (its log is not open here).
func (s *Stream) Shard(i int) (*Shard, error) {
	if i < 0 || i >= len(s.slots) {
		return nil, s.noShard(i)
	}
	return s.heldShard(i)
}

// Held reports whether shard i's log is open on this broker: Shard(i)
// then returns it.
func (s *Stream) Held(i int) bool {
	return i >= 0 && i < len(s.slots) && s.slots[i].Load() != nil
}

// heldShard is Shard for an i in range.
func (s *Stream) heldShard(i int) (*Shard, error) {
	if sh := s.slots[i].Load(); sh != nil {
		return sh, nil
	}
	return nil, s.notHeld(i)
}

// notHeld refuses an operation on shard i, which has no log here: another
// broker serves it, and Ownership may know which.
func (s *Stream) notHeld(i int) error {
	_, leader := s.engine.owner.Leader(s.info.ID, i)
	return &NotLeaderError{Stream: s.info.ID, Shard: i, Leader: leader}
}

// openShards yields the shards open here now, in order.
func (s *Stream) openShards() iter.Seq[*Shard] {
	return func(yield func(*Shard) bool) {
		for i := range s.slots {
			if sh := s.slots[i].Load(); sh != nil && !yield(sh) {
				return
			}
		}
	}
}

// stopAll stops every shard open here with why, leaving the slots as they
// are (the stream is out of the table, or the engine closed).
func (s *Stream) stopAll(why error) error {
	var errs []error
	for sh := range s.openShards() {
		errs = append(errs, sh.stop(why))
	}
	return errors.Join(errs...)
}

// appendRefusal is the error an append to sh that failed with err
// returns: a shard Reconcile took out of its slot between the lookup and
// the append (its log closed under the caller) refuses it as not held, so
// the client goes to the leader; any other failure is the log's own.
func (s *Stream) appendRefusal(sh *Shard, err error) error {
	if errors.Is(err, shardlog.ErrClosed) && s.slots[sh.index].Load() != sh {
		return s.notHeld(sh.index)
	}
	return err
}

// ShardFor is the shard a routing key chooses: xxh3(key) mod shards, and
// shard 0 for no key. A key always resolves to the same shard while the
// shard count stays the same.
func (s *Stream) ShardFor(key []byte) int { return ShardFor(key, len(s.slots)) }

// ShardFor is the routing rule, for code that routes alone: the
// protocol's, wire.ShardFor, which is its one definition.
func ShardFor(key []byte, shards int) int { return wire.ShardFor(key, shards) }

// noShard is ErrNoShard for shard i, saying which shards there are.
func (s *Stream) noShard(i int) error {
	return fmt.Errorf("%w: %s has %d shards (0 to %d), not shard %d", ErrNoShard, s.info.ID, len(s.slots), len(s.slots)-1, i)
}
