package netio

import (
	"context"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio/wire"
)

func init() {
	frameHandlers[wire.TypeGroupPoll] = (*conn).groupPoll
	frameHandlers[wire.TypeGroupAck] = (*conn).groupSettle
	frameHandlers[wire.TypeGroupNack] = (*conn).groupSettle
	frameHandlers[wire.TypeGroupExtend] = (*conn).groupSettle
	frameHandlers[wire.TypeGroupDescribe] = (*conn).groupAdmin
	frameHandlers[wire.TypeGroupList] = (*conn).groupAdmin
	frameHandlers[wire.TypeGroupDeadLetters] = (*conn).groupAdmin
	frameHandlers[wire.TypeGroupRedrive] = (*conn).groupAdmin
	featureHooks = append(featureHooks, func(cfg *Config) wire.Features {
		if cfg.Groups == nil {
			return 0
		}
		return wire.FeatureConsumerGroups
	})
}

// Bounds of a connection's group requests, which all run off the loops.
const (
	// groupPollsMax bounds the polls one connection has waiting or
	// running; past it a poll is refused with overloaded.
	groupPollsMax = 256
	// groupOpsMax bounds its other group requests in flight.
	groupOpsMax = 1024
	// groupNamesMax bounds the group and consumer names a connection
	// remembers; past it the cache starts over.
	groupNamesMax = 256
	// groupRecordsOverhead is what a GROUP_RECORDS frame adds to its
	// records: the header, shard and count. A record's own fields (at most
	// 30 bytes) are fewer than its framed size in the log (40 bytes
	// more than key and value), so records whose framed sizes fit in
	// frame_bytes_max - groupRecordsOverhead fit in one frame.
	groupRecordsOverhead = wire.HeaderSize + 4 + 4
	// groupJobKeepBytes is the largest record buffer a pooled poll keeps.
	groupJobKeepBytes = 1 << 20
)

var (
	errGroupPollsBusy = &wire.Error{Code: wire.CodeOverloaded, Message: "too many group polls waiting on this connection",
		Details: wire.Details{RetryAfterMillis: 10}}
	errGroupOpsBusy = &wire.Error{Code: wire.CodeOverloaded, Message: "too many group requests in flight on this connection",
		Details: wire.Details{RetryAfterMillis: 10}}
)

// selfConsumers numbers the connections that poll without naming a
// consumer: each is the consumer "conn-<n>".
var selfConsumers atomic.Uint64

// connGroups is a connection's side of consumer groups: the names its
// frames used, and the context its long polls wait under, cancelled with
// the connection (or by Stop).
type connGroups struct {
	// loop
	names map[string]string // group and consumer names, interned
	self  string            // the connection's own consumer name, made on first use

	polls atomic.Int32 // polls waiting or running
	ops   atomic.Int32 // other group requests in flight

	mu     sync.Mutex // guards the fields below; a leaf
	ctx    context.Context
	cancel context.CancelCauseFunc
	ending error // set once the connection's polls must end
}

// name interns a group or consumer name. Loop only.
func (g *connGroups) name(b []byte) string {
	if s, ok := g.names[string(b)]; ok {
		return s
	}
	if g.names == nil || len(g.names) >= groupNamesMax {
		g.names = make(map[string]string, 8)
	}
	s := string(b)
	g.names[s] = s
	return s
}

// waitContext is the context every poll of the connection waits under;
// made on first use, so a connection that never polls allocates none.
func (g *connGroups) waitContext() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ctx == nil {
		g.ctx, g.cancel = context.WithCancelCause(context.Background())
		if g.ending != nil {
			g.cancel(g.ending)
		}
	}
	return g.ctx
}

// endGroups ends the connection's waiting polls: Stop's are answered
// shutting_down, a closed connection's not at all.
func (c *conn) endGroups(reason error) {
	g := &c.groups
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ending == nil {
		g.ending = reason
	}
	if g.cancel != nil {
		g.cancel(g.ending)
	}
}

// groupKey resolves a group ref to the engine's key and the consumer the
// request speaks for, once the principal may act. Loop only.
func (c *conn) groupKey(ref wire.GroupRef, action Action) (group.Key, string, *wire.Error) {
	id, err := c.streams.id(ref.Stream)
	if err != nil {
		return group.Key{}, "", toWire(err)
	}
	if err := c.principal.Allow(action, resourceOf(id)); err != nil {
		return group.Key{}, "", refusal(err, wire.CodeForbidden)
	}
	k := group.Key{Stream: id, Shard: int(ref.Shard), Group: c.groups.name(ref.Group)}
	if err := engine.CheckName("group", k.Group); err != nil {
		return group.Key{}, "", invalid("group", err)
	}
	who := c.consumer(ref.Consumer)
	if err := engine.CheckName("consumer", who); err != nil {
		return group.Key{}, "", invalid("consumer", err)
	}
	return k, who, nil
}

// consumer is the name a request's claims are held under: the one its
// frame gave, or the connection's own.
func (c *conn) consumer(named []byte) string {
	if len(named) > 0 {
		return c.groups.name(named)
	}
	if c.groups.self == "" {
		c.groups.self = "conn-" + strconv.FormatUint(selfConsumers.Add(1), 10)
	}
	return c.groups.self
}

// groupPoll handles GROUP_POLL: check it on the loop, then claim and wait
// on a goroutine of its own, which answers GROUP_RECORDS through the
// outbox. Loop only.
func (c *conn) groupPoll(f wire.Frame) {
	var m wire.GroupPoll
	if err := m.Decode(f, c.s.cfg.Limits); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	k, who, e := c.groupKey(m.Group, ActionGroupConsume)
	if e == nil {
		e = checkPoll(&m)
	}
	if e != nil {
		c.answer(f.RequestID, e)
		return
	}
	if c.groups.polls.Add(1) > groupPollsMax {
		c.groups.polls.Add(-1)
		c.answer(f.RequestID, errGroupPollsBusy)
		return
	}
	if !c.s.admit() {
		c.groups.polls.Add(-1)
		c.answer(f.RequestID, errShuttingDown)
		return
	}
	j := newGroupJob(c, f.RequestID, wire.TypeGroupPoll, k, who)
	j.max = int(min(m.MaxRecords, group.PollRecordsMax))
	j.wait = min(time.Duration(m.WaitMillis)*time.Millisecond, group.WaitMax)
	j.dur = time.Duration(m.ClaimMillis) * time.Millisecond
	j.start()
}

// checkPoll refuses what the engine would, before any work is handed off.
// A wait longer than the engine's longest is shortened to it: the poll
// answers with no records and the consumer polls again.
func checkPoll(m *wire.GroupPoll) *wire.Error {
	if m.MaxRecords == 0 {
		return fieldError("max_records", "a poll asks for at least one record")
	}
	if time.Duration(m.ClaimMillis)*time.Millisecond > group.VisibilityMax {
		return fieldError("claim_ms", "longer than "+group.VisibilityMax.String())
	}
	return nil
}

// groupSettle handles GROUP_ACK, GROUP_NACK and GROUP_EXTEND: check them
// and copy the offsets on the loop, apply them on a goroutine (the group's
// logs may have to open, or wait for buffer room), which answers
// GROUP_RESULT. Loop only.
func (c *conn) groupSettle(f wire.Frame) {
	var m wire.GroupOffsets
	if err := m.Decode(f, c.s.cfg.Limits); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	k, who, e := c.groupKey(m.Group, ActionGroupConsume)
	if e == nil {
		e = checkSettle(&m)
	}
	if e != nil {
		c.answer(f.RequestID, e)
		return
	}
	j, e := c.startGroupOp(f.RequestID, m.Op, k, who)
	if e != nil {
		c.answer(f.RequestID, e)
		return
	}
	j.dur = time.Duration(m.Millis) * time.Millisecond
	for i := range m.Offsets.Len() {
		j.offsets = append(j.offsets, int64(m.Offsets.At(i)))
	}
	j.start()
}

func checkSettle(m *wire.GroupOffsets) *wire.Error {
	for i := range m.Offsets.Len() {
		if m.Offsets.At(i) > math.MaxInt64 {
			return fieldError("offsets", "an offset above 2^63-1")
		}
	}
	d := time.Duration(m.Millis) * time.Millisecond
	switch {
	case m.Op == wire.TypeGroupNack && d > group.NackDelayMax:
		return fieldError("delay_ms", "longer than "+group.NackDelayMax.String())
	case m.Op == wire.TypeGroupExtend && (d <= 0 || d > group.VisibilityMax):
		return fieldError("extend_ms", "not in 1ms.."+group.VisibilityMax.String())
	}
	return nil
}

// startGroupOp counts a group request other than a poll and takes a job
// for it, unless the connection has too many or Stop has begun.
func (c *conn) startGroupOp(requestID uint64, op wire.Type, k group.Key, who string) (*groupJob, *wire.Error) {
	if c.groups.ops.Add(1) > groupOpsMax {
		c.groups.ops.Add(-1)
		return nil, errGroupOpsBusy
	}
	if !c.s.admit() {
		c.groups.ops.Add(-1)
		return nil, errShuttingDown
	}
	return newGroupJob(c, requestID, op, k, who), nil
}
