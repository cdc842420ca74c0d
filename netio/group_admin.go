package netio

import (
	"errors"
	"math"

	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio/wire"
)

// deadLettersPage is a GROUP_DEAD_LETTERS page when the request sets no
// limit.
const deadLettersPage = 1000

// groupAdmin handles GROUP_DESCRIBE, GROUP_LIST, GROUP_DEAD_LETTERS and
// GROUP_REDRIVE: decode and check on the loop, then run on a goroutine of
// their own (the first request naming a shard opens its group logs; a
// redrive appends to one), which answers. Loop only.
func (c *conn) groupAdmin(f wire.Frame) {
	m := wire.NewControl(f.Type)
	if err := wire.DecodeControl(f, c.s.cfg.Limits, m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	var run func() (wire.Control, error)
	var e *wire.Error
	switch m := m.(type) {
	case *wire.GroupDescribe:
		run, e = c.groupDescribe(m)
	case *wire.GroupList:
		run, e = c.groupList(m)
	case *wire.GroupDeadLetters:
		run, e = c.groupDeadLetters(m)
	case *wire.GroupRedrive:
		run, e = c.groupRedrive(m)
	}
	if e == nil {
		e = c.startGroupAdmin()
	}
	if e != nil {
		c.answer(f.RequestID, e)
		return
	}
	go func() {
		defer c.endGroupAdmin()
		answer, err := run()
		if err != nil {
			c.sendError(f.RequestID, groupToWire(err))
			return
		}
		c.sendControl(f.RequestID, answer)
	}()
}

// startGroupAdmin counts an admin request against the connection's bound
// and the server's work.
func (c *conn) startGroupAdmin() *wire.Error {
	if c.groups.ops.Add(1) > groupOpsMax {
		c.groups.ops.Add(-1)
		return errGroupOpsBusy
	}
	if !c.s.admit() {
		c.groups.ops.Add(-1)
		return errShuttingDown
	}
	return nil
}

func (c *conn) endGroupAdmin() {
	c.groups.ops.Add(-1)
	c.s.work.done()
}

// adminKey is groupKey for the JSON requests, which name no consumer.
func (c *conn) adminKey(ref wire.StreamRef, shard uint32, name string, action Action) (group.Key, *wire.Error) {
	k, _, e := c.groupKey(wire.GroupRef{Stream: ref, Shard: shard, Group: []byte(name)}, action)
	return k, e
}

func (c *conn) groupDescribe(m *wire.GroupDescribe) (func() (wire.Control, error), *wire.Error) {
	k, e := c.adminKey(m.Stream, m.Shard, m.Group, ActionGroupDescribe)
	if e != nil {
		return nil, e
	}
	groups := c.s.cfg.Groups
	return func() (wire.Control, error) {
		d, err := groups.Describe(k)
		if err != nil {
			return nil, err
		}
		return groupInfo(m.Stream, d), nil
	}, nil
}

// groupInfo is a description as GROUP_INFO carries it.
func groupInfo(ref wire.StreamRef, d group.Description) *wire.GroupInfo {
	return &wire.GroupInfo{
		Stream: ref, Shard: uint32(d.Key.Shard), Group: d.Key.Group,
		Cursor: uint64(d.Cursor), InFlight: uint64(d.InFlight), DeadLetters: uint64(d.DeadLetters),
		RetentionSkipped: d.RetentionSkips,
		NextOffset:       uint64(d.Next), EndOffset: uint64(d.End), Lag: uint64(max(d.Lag, 0)),
		Owed: uint64(d.Owed), Consumers: uint64(d.Consumers),
		Delivered: d.Delivered, Redelivered: d.Redelivered, Acked: d.Acked, Nacked: d.Nacked,
		Lapsed: d.Lapsed, DeadLettered: d.DeadLettered, Redriven: d.Redriven,
	}
}

func (c *conn) groupList(m *wire.GroupList) (func() (wire.Control, error), *wire.Error) {
	id, err := c.streams.id(m.Stream)
	if err != nil {
		return nil, toWire(err)
	}
	if err := c.principal.Allow(ActionGroupDescribe, resourceOf(id)); err != nil {
		return nil, refusal(err, wire.CodeForbidden)
	}
	groups := c.s.cfg.Groups
	return func() (wire.Control, error) {
		ds, err := groups.List(id, int(m.Shard))
		if err != nil {
			return nil, err
		}
		out := &wire.GroupListResult{Groups: make([]string, 0, len(ds))}
		for _, d := range ds {
			out.Groups = append(out.Groups, d.Key.Group)
		}
		return out, nil
	}, nil
}

func (c *conn) groupDeadLetters(m *wire.GroupDeadLetters) (func() (wire.Control, error), *wire.Error) {
	k, e := c.adminKey(m.Stream, m.Shard, m.Group, ActionGroupDescribe)
	if e != nil {
		return nil, e
	}
	from := int64(0)
	if m.AfterOffset != nil {
		if *m.AfterOffset >= math.MaxInt64 {
			return nil, fieldError("after_offset", "above 2^63-2")
		}
		from = int64(*m.AfterOffset) + 1
	}
	limit := int(m.Limit)
	if limit == 0 {
		limit = deadLettersPage
	}
	limit = min(limit, group.PollRecordsMax-1)
	groups := c.s.cfg.Groups
	return func() (wire.Control, error) {
		dls, err := groups.DeadLetters(k, from, limit+1)
		if err != nil {
			return nil, err
		}
		out := &wire.GroupDeadLettersResult{DeadLetters: make([]wire.DeadLetter, 0, min(len(dls), limit))}
		for i, dl := range dls {
			if i == limit {
				out.More = true
				break
			}
			out.DeadLetters = append(out.DeadLetters, wire.DeadLetter{Offset: uint64(dl.Offset), DeliveryCount: dl.Deliveries,
				Reason: dl.Reason.String(), Detail: dl.Detail, At: dl.At.UnixNano()})
		}
		return out, nil
	}, nil
}

func (c *conn) groupRedrive(m *wire.GroupRedrive) (func() (wire.Control, error), *wire.Error) {
	k, e := c.adminKey(m.Stream, m.Shard, m.Group, ActionGroupRedrive)
	if e != nil {
		return nil, e
	}
	for _, o := range m.Offsets {
		if o > math.MaxInt64 {
			return nil, fieldError("offsets", "an offset above 2^63-1")
		}
	}
	groups := c.s.cfg.Groups
	return func() (wire.Control, error) {
		if len(m.Offsets) == 0 {
			n, err := groups.Redrive(k, nil)
			return &wire.GroupRedriveResult{Redriven: uint64(n)}, err
		}
		return redriveEach(groups, k, m.Offsets)
	}, nil
}

// redriveEach redrives the offsets one at a time, so the answer can say
// which were not dead letters (a redrive appends its record without
// waiting for it to be synced, so this costs no more than one call).
func redriveEach(groups *group.Manager, k group.Key, offsets []uint64) (wire.Control, error) {
	out := &wire.GroupRedriveResult{}
	one := make([]int64, 1)
	for _, o := range offsets {
		one[0] = int64(o)
		n, err := groups.Redrive(k, one)
		switch {
		case errors.Is(err, group.ErrNotDead):
			out.NotDead = append(out.NotDead, o)
		case err != nil:
			return nil, err
		}
		out.Redriven += uint64(n)
	}
	return out, nil
}
