package group

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/felixbroker/felix/engine"
)

// Key names a group: a shard of a stream, and the group's name there.
type Key struct {
	Stream engine.StreamID
	Shard  int
	Group  string
}

func (k Key) String() string { return fmt.Sprintf("%s/%d/%s", k.Stream, k.Shard, k.Group) }

// Manager serves the consumer groups of one engine's durable shards. Safe
// for concurrent use.
type Manager struct {
	eng   *engine.Engine
	owner engine.Ownership
	opts  Options
	base  time.Time // the clock reading group time counts from

	mu     sync.RWMutex // guards shards and closed
	shards map[*engine.Shard]*shardGroups
	closed bool

	counters counters
}

// New returns a Manager over e. A shard's groups are opened the first time
// an operation names the shard; a replicated shard's group logs on every
// replica by HoldReplicas (replicated.go).
func New(e *engine.Engine, opts Options) *Manager {
	o := opts.withDefaults()
	return &Manager{eng: e, owner: e.Owner(), opts: o, base: o.Clock.Now(), shards: map[*engine.Shard]*shardGroups{}}
}

// now is the group clock: nanoseconds since the Manager began, monotonic
// with the real clock.
func (m *Manager) now() int64 { return int64(m.opts.Clock.Now().Sub(m.base)) }

func (m *Manager) timeAt(ns int64) time.Time { return m.base.Add(time.Duration(ns)) }

func unixTime(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// shardOf returns the open groups of the shard k names, opening them on
// first use. Only the shard's leader serves its groups, and only where the
// shard is held (engine.Stream.Shard refuses one that is not with
// *engine.NotLeaderError); a replicated shard's only while its replication
// says this broker leads it, rebuilt from the logs at each new generation
// (replicated.go).
func (m *Manager) shardOf(k Key) (*shardGroups, error) {
	s, streamErr := m.eng.Stream(k.Stream)
	if streamErr == nil && (k.Shard < 0 || k.Shard >= s.Info().Config.Shards) {
		_, err := s.Shard(k.Shard) // no such shard, wherever it would be led: say so rather than redirect
		return nil, err
	}
	if local, leader := m.owner.Leader(k.Stream, k.Shard); !local {
		return nil, &engine.NotLeaderError{Stream: k.Stream, Shard: k.Shard, Leader: leader}
	}
	if streamErr != nil {
		return nil, streamErr
	}
	sh, err := s.Shard(k.Shard)
	if err != nil {
		return nil, err
	}
	if !s.Info().Config.Durable {
		return nil, ErrNotDurable
	}
	sg, err := m.groupsOf(sh, m.replicated(s.Info()))
	if err != nil {
		return nil, err
	}
	if err := sg.lead(); err != nil {
		return nil, err
	}
	return sg, nil
}

// groupsOf returns the open groups of sh, opening them (held as parts of
// its replication when held) on first use.
func (m *Manager) groupsOf(sh *engine.Shard, held bool) (*shardGroups, error) {
	m.mu.RLock()
	sg, closed := m.shards[sh], m.closed
	m.mu.RUnlock()
	switch {
	case closed:
		return nil, ErrClosed
	case sg != nil:
		return sg, nil
	}
	m.mu.Lock() // a shard's groups open under it: rare, and it reads two logs
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if sg := m.shards[sh]; sg != nil {
		return sg, nil
	}
	sg, err := openShardGroups(m, sh, held)
	if err != nil {
		return nil, err
	}
	m.shards[sh] = sg
	return sg, nil
}

// forget drops a closed shard's groups from the table.
func (m *Manager) forget(sg *shardGroups) {
	m.mu.Lock()
	if m.shards[sg.shard] == sg {
		delete(m.shards, sg.shard)
	}
	m.mu.Unlock()
}

// withGroup runs fn on an existing group with its locks held.
func (m *Manager) withGroup(k Key, fn func(g *group) error) error {
	if err := engine.CheckName("group", k.Group); err != nil {
		return err
	}
	sg, err := m.shardOf(k)
	if err != nil {
		return err
	}
	sg.mu.RLock()
	defer sg.mu.RUnlock()
	g, err := sg.lookup(k.Group)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := unlogged(g.applyCommits()); err != nil {
		return err
	}
	g.expireDead()
	return fn(g)
}

// Create makes a group starting at the shard's earliest record, its latest
// (the next one published), or an offset within [start, end]. Poll creates
// a missing group from the earliest on its own.
func (m *Manager) Create(k Key, start engine.StartKind, offset int64) error {
	if err := engine.CheckName("group", k.Group); err != nil {
		return err
	}
	sg, err := m.shardOf(k)
	if err != nil {
		return err
	}
	first, end := sg.shard.Start(), sg.shard.End()
	cursor := first
	switch start {
	case engine.StartLatest:
		cursor = end
	case engine.StartOffset:
		if offset < first || offset > end {
			return &engine.OffsetError{Offset: offset, Start: first, End: end, Kind: offsetKind(offset, first)}
		}
		cursor = offset
	}
	_, err = sg.create(k.Group, cursor)
	return err
}

func offsetKind(offset, start int64) error {
	if offset < start {
		return engine.ErrOffsetBelowStart
	}
	return engine.ErrOffsetPastEnd
}

// Delete removes a group, its cursor and its dead letters. Consumers
// waiting on it are woken and find it gone.
func (m *Manager) Delete(k Key) error {
	if err := engine.CheckName("group", k.Group); err != nil {
		return err
	}
	sg, err := m.shardOf(k)
	if err != nil {
		return err
	}
	return sg.remove(k.Group)
}

// Compact compacts both group logs of a shard now (they are also compacted
// in the background as they grow): every record that no longer says where
// a group stands is dropped from their sealed segments.
func (m *Manager) Compact(id engine.StreamID, shard int) error {
	sg, err := m.shardOf(Key{Stream: id, Shard: shard})
	if err != nil {
		return err
	}
	sg.mu.RLock()
	if sg.closed != nil {
		sg.mu.RUnlock()
		return sg.closed
	}
	sg.cursors.wg.Add(1) // close waits for it; added before closed can be set
	sg.deadLog.wg.Add(1)
	sg.mu.RUnlock()
	defer sg.cursors.wg.Done()
	defer sg.deadLog.wg.Done()
	return errors.Join(sg.cursors.compact(), sg.deadLog.compact())
}

// Release closes one shard's groups without the shard stopping, so that
// leading it again rebuilds them from the logs rather than trusting what
// it held. In-flight claims are lost, as at a restart. A replicated
// shard's logs stay open and held (HoldReplicas): its groups only go
// stale, and are rebuilt at the next operation that finds this broker
// leading (which a new generation does without a Release). A shard this
// broker no longer holds has nothing to release: its groups closed when
// the engine stopped it.
func (m *Manager) Release(id engine.StreamID, shard int) error {
	s, err := m.eng.Stream(id)
	if err != nil {
		return err
	}
	sh, err := s.Shard(shard)
	if errors.Is(err, engine.ErrNotLeader) {
		return nil
	}
	if err != nil {
		return err
	}
	m.mu.RLock()
	sg := m.shards[sh]
	m.mu.RUnlock()
	switch {
	case sg == nil:
		return nil
	case sg.held:
		sg.unbuild()
		return nil
	}
	return sg.close(ErrClosed)
}

// Close closes every shard's groups. The engine's own Close also closes
// them, through the shards they are attached to.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	open := make([]*shardGroups, 0, len(m.shards))
	for _, sg := range m.shards {
		open = append(open, sg)
	}
	m.mu.Unlock()
	var errs []error
	for _, sg := range open {
		errs = append(errs, sg.close(ErrClosed))
	}
	return errors.Join(errs...)
}
