package group

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// The group logs' directories, under the shard's own.
const (
	groupsDir  = "groups"
	cursorsDir = "cursors"
	deadDir    = "dead"
)

// shardGroups is every group of one shard, and the shard's two group logs.
type shardGroups struct {
	m     *Manager
	shard *engine.Shard
	id    engine.StreamID
	// held: the shard is replicated, its logs parts of its replication,
	// open for the shard's lifetime; its groups serve only while this
	// broker leads it, rebuilt at each generation (replicated.go).
	held bool
	// quorum (held): the stream is at Quorum, and so are its group logs:
	// an ack, nack, reject or create returns once its records are on a
	// majority (quorum.go).
	quorum bool

	// mu guards groups, closed, and for a held shard gen and built.
	// Read-locked by every operation on a group (which then takes that
	// group's mu); write-locked to add or remove a group, to close and
	// to rebuild.
	mu    sync.RWMutex
	gen   uint32 // what the logs are appended at: the stream's, or the leading one
	built bool   // held: the groups were rebuilt from the logs at gen
	// moved (held): a log refused an append because it moved under it
	// (ledAppends, led_appends.go); the groups serve again once rebuilt. Set under mu
	// read-locked, so atomic.
	moved  atomic.Bool
	groups map[string]*group
	closed error

	cursors *groupLog
	deadLog *groupLog

	latestMu sync.Mutex       // a leaf
	latest   map[string]int64 // group -> offset of its live cursor record

	visible signal        // fired when either log makes records visible
	done    chan struct{} // closed when the shard's groups close
}

// openShardGroups opens (creating) the group logs beside the shard's log.
// A shard not held (not replicated) has every group rebuilt from them at
// once; a held one has both logs held as parts of its replication, and
// its groups rebuilt once this broker leads it (replicated.go).
func openShardGroups(m *Manager, sh *engine.Shard, held bool) (*shardGroups, error) {
	s := sh.Stream()
	sg := &shardGroups{m: m, shard: sh, id: s.ID(), held: held, quorum: held && s.Info().Config.Consistency == engine.ConsistencyQuorum,
		groups: map[string]*group{}, latest: map[string]int64{}, done: make(chan struct{})}
	if !held {
		sg.gen = s.Info().Generation
	}
	dir := filepath.Join(sh.Dir(), groupsDir)
	var err error
	if sg.cursors, err = sg.openLog(filepath.Join(dir, cursorsDir), engine.PartGroupCursors, sg.keepCursor); err != nil {
		return nil, err
	}
	if sg.deadLog, err = sg.openLog(filepath.Join(dir, deadDir), engine.PartDeadLetters, sg.keepDead); err != nil {
		sg.cursors.close()
		return nil, err
	}
	if held {
		err = sg.holdParts()
	} else {
		err = sg.rebuild()
	}
	if err == nil {
		err = sh.Attach(sg)
	}
	if err != nil {
		sg.cursors.release()
		sg.deadLog.release()
		sg.cursors.close()
		sg.deadLog.close()
		return nil, err
	}
	return sg, nil
}

// openLog opens one group log, part part of the shard's replication.
func (sg *shardGroups) openLog(dir string, part int, keep shardlog.KeepFunc) (*groupLog, error) {
	o := sg.m.opts
	l, err := shardlog.Open(shardlog.Options{
		FS: sg.m.eng.FS(), Dir: dir, Fsync: *o.Fsync, SegmentBytes: o.LogSegmentBytes,
		BufferBytes: 64 << 10, Logger: o.Logger.With("group_log", dir),
		OnVisible: func(int64, int64, []byte) { sg.visible.fire() },
	})
	if err != nil {
		return nil, fmt.Errorf("felix/group: opening %s: %w", dir, err)
	}
	gl := &groupLog{sg: sg, name: dir, part: part, keep: keep}
	gl.heal = shardlog.NewHealer(l, gl.takeLog, nil) // heal.go
	return gl, nil
}

// rebuild replays both logs: the cursor log gives the groups and their
// cursors (the last record of each wins; a tombstone deletes), the
// dead-letter log their dead letters and redriven records.
func (sg *shardGroups) rebuild() error {
	return sg.rebuildFrom(sg.cursors.log(), sg.deadLog.log())
}

// rebuildFrom is rebuild from the cursor log cursors and the dead-letter
// log dead.
func (sg *shardGroups) rebuildFrom(cursors, dead *shardlog.Log) error {
	err := replay(cursors, func(r *segment.Record) error {
		name := string(r.Key)
		switch {
		case r.Flags&segment.FlagControl != 0:
			return nil // a replica's (a generation's start)
		case r.Flags&segment.FlagTombstone != 0:
			delete(sg.groups, name)
			delete(sg.latest, name)
			return nil
		}
		cursor, err := decodeCursorValue(r.Value)
		if err != nil {
			return fmt.Errorf("%w at offset %d of %s", err, r.Offset, sg.cursors.name)
		}
		sg.groups[name] = newGroup(sg, name, cursor)
		sg.latest[name] = r.Offset
		return nil
	})
	if err != nil {
		return err
	}
	return replay(dead, func(r *segment.Record) error {
		if r.Flags&segment.FlagControl != 0 {
			return nil
		}
		ev, err := decodeDeadValue(r.Value)
		if err != nil {
			return fmt.Errorf("%w at offset %d of %s", err, r.Offset, sg.deadLog.name)
		}
		if g := sg.groups[string(r.Key)]; g != nil {
			g.replayDead(&ev, r.Offset)
		}
		return nil
	})
}

// replayDead applies one dead-letter log record at rebuild.
func (g *group) replayDead(ev *deadEvent, at int64) {
	o := ev.offset
	switch ev.kind {
	case kindDead:
		delete(g.again, o)
		if m := g.sg.m; deadExpired(ev.at, m.opts.Clock.Now().UnixNano(), m.opts.DeadLetterMaxAge) {
			delete(g.dead, o) // past its age while the broker was down
			return
		}
		g.dead[o] = &deadEntry{logOffset: at, DeadLetter: DeadLetter{Offset: o, Deliveries: ev.deliveries,
			Reason: ev.reason, Detail: ev.detail, At: unixTime(ev.at)}}
	case kindRedriven:
		if g.again[o] == nil {
			g.owed++
		}
		delete(g.dead, o)
		g.again[o] = &slot{state: slotOwed, logOffset: at}
		g.due = 0
	case kindDone:
		if g.again[o] != nil {
			g.owed--
		}
		delete(g.dead, o)
		delete(g.again, o)
	}
}

func (sg *shardGroups) noteLatest(name string, at int64) {
	sg.latestMu.Lock()
	sg.latest[name] = at
	sg.latestMu.Unlock()
}

// keepCursor keeps the last cursor record of each live group.
func (sg *shardGroups) keepCursor(r *segment.Record) bool {
	sg.latestMu.Lock()
	defer sg.latestMu.Unlock()
	at, ok := sg.latest[string(r.Key)]
	return ok && at == r.Offset
}

// keepDead keeps the record that says where each dead or redriven record
// stands; the rest (superseded, finished, of deleted groups) goes.
func (sg *shardGroups) keepDead(r *segment.Record) bool {
	_, o, err := decodeDeadHead(r.Value)
	if err != nil {
		return true // not ours to judge; it refuses at the next rebuild anyway
	}
	sg.mu.RLock()
	defer sg.mu.RUnlock()
	g := sg.groups[string(r.Key)]
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.liveDeadRecord(o) == r.Offset
}

// lookup returns the named group; sg.mu is read-locked.
func (sg *shardGroups) lookup(name string) (*group, error) {
	if err := sg.unavailable(); err != nil {
		return nil, err
	}
	if g := sg.groups[name]; g != nil {
		return g, nil
	}
	return nil, ErrNotFound
}

// create adds a group with its first cursor.
func (sg *shardGroups) create(name string, cursor int64) (*group, error) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if err := sg.unavailable(); err != nil {
		return nil, err
	}
	if g := sg.groups[name]; g != nil {
		return g, ErrExists
	}
	if len(sg.groups) >= sg.m.opts.GroupsMax {
		return nil, ErrTooManyGroups
	}
	g := newGroup(sg, name, cursor)
	g.value = appendCursorValue(g.value[:0], cursor)
	g.entry[0] = shardlog.Entry{Key: g.key, Value: g.value}
	at, err := sg.cursors.appendWait(g.entry[:]) // a group, once created, survives a crash
	if err != nil {
		return nil, err
	}
	sg.noteLatest(name, at)
	sg.groups[name] = g
	return g, nil
}

// remove deletes a group: its dead letters and redriven records are
// logged done, then a tombstone ends it in the cursor log.
func (sg *shardGroups) remove(name string) error {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if err := sg.unavailable(); err != nil {
		return err
	}
	g := sg.groups[name]
	if g == nil {
		return ErrNotFound
	}
	if err := sg.refusal(); err != nil {
		return err // heal.go: refused before anything is logged
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, o := range g.deadAndAgain() {
		if err := g.logDead(&deadEvent{kind: kindDone, offset: o}, nil); err != nil {
			return err
		}
	}
	g.entry[0] = shardlog.Entry{Key: g.key, Flags: segment.FlagTombstone}
	if _, err := sg.cursors.appendAt(g.entry[:], nil); err != nil {
		return err
	}
	sg.latestMu.Lock()
	delete(sg.latest, name)
	sg.latestMu.Unlock()
	g.deleted = true
	delete(sg.groups, name)
	g.wake.fire()
	return nil
}

func (g *group) deadAndAgain() []int64 {
	var out []int64
	for o := range g.dead {
		out = append(out, o)
	}
	for o := range g.again {
		out = append(out, o)
	}
	return out
}

// names lists the groups, sorted.
func (sg *shardGroups) names() []string {
	sg.mu.RLock()
	defer sg.mu.RUnlock()
	out := make([]string, 0, len(sg.groups))
	for n := range sg.groups {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Close ends the shard's groups: waiting polls return, a held shard's
// logs stop replicating, the logs close. The engine calls it when the
// shard stops (it is attached to the shard); Manager.Release (of a shard
// not held) and Manager.Close call it too. Idempotent.
func (sg *shardGroups) Close() error {
	return sg.close(ErrClosed)
}

func (sg *shardGroups) close(why error) error {
	sg.mu.Lock()
	if sg.closed != nil {
		sg.mu.Unlock()
		return nil
	}
	if err := sg.shard.Err(); err != nil {
		why = err
	}
	sg.closed = why
	for _, g := range sg.groups {
		g.wake.fire()
	}
	sg.mu.Unlock()
	// No operation runs now (each holds mu read-locked and sees closed), so
	// nothing appends; a compaction in progress may still read the groups.
	close(sg.done)
	sg.cursors.release() // after closed is set: a reopen holds no part again
	sg.deadLog.release()
	err := errors.Join(sg.cursors.close(), sg.deadLog.close())
	sg.m.forget(sg)
	return err
}
