package group

import (
	"context"
	"fmt"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment"
)

// PollRequest asks for records of a group.
type PollRequest struct {
	Key      Key
	Consumer string
	// Max is the most records to return, 1..PollRecordsMax.
	Max int
	// MaxBytes bounds the framed size of the records returned (one is
	// always allowed); 0: Options.PollBytes.
	MaxBytes int
	// Wait is how long to wait for a record when none is owed now, up to
	// WaitMax; 0 answers at once.
	Wait time.Duration
	// Visibility is how long the claims stand; 0: Options.Visibility.
	Visibility time.Duration
}

func (r *PollRequest) check() error {
	if err := engine.CheckName("group", r.Key.Group); err != nil {
		return err
	}
	if err := engine.CheckName("consumer", r.Consumer); err != nil {
		return err
	}
	switch {
	case r.Max < 1 || r.Max > PollRecordsMax:
		return fmt.Errorf("%w: max %d records not in 1..%d", ErrInvalid, r.Max, PollRecordsMax)
	case r.Wait < 0 || r.Wait > WaitMax:
		return fmt.Errorf("%w: wait %v not in 0..%v", ErrInvalid, r.Wait, WaitMax)
	case r.Visibility < 0 || r.Visibility > VisibilityMax:
		return fmt.Errorf("%w: visibility %v not in 0..%v", ErrInvalid, r.Visibility, VisibilityMax)
	case r.MaxBytes < 0:
		return fmt.Errorf("%w: max bytes %d", ErrInvalid, r.MaxBytes)
	}
	return nil
}

// Delivery is one record handed to a consumer, claimed until ClaimedUntil.
// Record's Key and Value alias the poll's buffer.
type Delivery struct {
	segment.Record
	Deliveries   uint32 // 1 on the first delivery
	ClaimedUntil time.Time
}

// Poll is PollInto with fresh slices.
func (m *Manager) Poll(ctx context.Context, req PollRequest) ([]Delivery, error) {
	out, _, err := m.PollInto(ctx, req, nil, nil)
	return out, err
}

// PollInto claims up to req.Max records for req.Consumer and appends them
// to dst, their bytes to buf: records owed again first (lapsed, nacked,
// redriven), in offset order, then records never delivered. When none is
// owed it waits up to req.Wait for one: for the shard's next records, a
// nack, a redrive, a claim to lapse; it asks Ownership again at least
// every OwnershipRecheck, so a shard that moves ends the wait with
// *engine.NotLeaderError. A group that does not exist is created from the
// shard's earliest record. Reuse dst and buf across polls and it allocates
// nothing in steady state.
func (m *Manager) PollInto(ctx context.Context, req PollRequest, dst []Delivery, buf []byte) ([]Delivery, []byte, error) {
	if err := req.check(); err != nil {
		return dst, buf, err
	}
	sg, err := m.shardOf(req.Key)
	if err != nil {
		return dst, buf, err
	}
	g, err := sg.groupForPoll(req.Key.Group)
	if err != nil {
		return dst, buf, err
	}
	m.counters.polls.Add(1)
	deadline, had := m.now()+int64(req.Wait), len(dst)
	for armed := false; ; armed = true {
		// The wake channels are taken before looking, so nothing that
		// happens between the look and the sleep is missed; a poll that
		// finds records at once takes none (they cost an allocation).
		var changed, wake <-chan struct{}
		if armed {
			changed, wake = sg.shard.Changed(), g.wake.wait()
		}
		var due int64
		dst, buf, due, err = sg.take(g, &req, dst, buf)
		now := m.now()
		if err != nil || len(dst) > had || now >= deadline {
			return dst, buf, err
		}
		if !armed {
			continue
		}
		wait := max(min(deadline, due)-now, int64(time.Millisecond))
		if err := m.sleep(ctx, time.Duration(wait), changed, wake, sg.done); err != nil {
			return dst, buf, err
		}
		if local, leader := m.owner.Leader(req.Key.Stream, req.Key.Shard); !local {
			return dst, buf, &engine.NotLeaderError{Stream: req.Key.Stream, Shard: req.Key.Shard, Leader: leader}
		}
		if err := sg.lead(); err != nil { // a replicated shard: still led, rebuilt at a new generation
			return dst, buf, err
		}
	}
}

// sleep waits for d (at most OwnershipRecheck), for a channel, or for ctx.
func (m *Manager) sleep(ctx context.Context, d time.Duration, changed, wake, done <-chan struct{}) error {
	t := m.opts.Clock.NewTimer(min(d, m.opts.OwnershipRecheck))
	defer t.Stop()
	select {
	case <-t.C():
	case <-changed:
	case <-wake:
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// groupForPoll returns the group, creating it from the shard's start.
func (sg *shardGroups) groupForPoll(name string) (*group, error) {
	sg.mu.RLock()
	g, err := sg.lookup(name)
	sg.mu.RUnlock()
	if err != ErrNotFound {
		return g, err
	}
	g, err = sg.create(name, sg.shard.Start())
	if err == ErrExists {
		err = nil
	}
	return g, err
}

// take claims what it can for one poll and returns when a slot next
// ripens (a claim lapses, a nack delay ends).
func (sg *shardGroups) take(g *group, req *PollRequest, dst []Delivery, buf []byte) ([]Delivery, []byte, int64, error) {
	sg.mu.RLock()
	defer sg.mu.RUnlock()
	if err := sg.unavailable(); err != nil {
		return dst, buf, 0, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.deleted {
		return dst, buf, 0, ErrNotFound
	}
	if err := unlogged(g.applyCommits()); err != nil {
		return dst, buf, 0, err
	}
	g.expireDead()
	t := taker{g: g, sh: sg.shard, now: sg.m.now(), dst: dst, buf: buf, max: len(dst) + req.Max}
	t.c = g.consumer(req.Consumer)
	t.vis = int64(req.Visibility)
	if t.vis == 0 {
		t.vis = int64(sg.m.opts.Visibility)
	}
	t.bytesMax = req.MaxBytes
	if t.bytesMax == 0 {
		t.bytesMax = sg.m.opts.PollBytes
	}
	// A group log that refuses a write does not stop the poll (heal.go).
	err := unlogged(g.skipRetained(sg.shard.Start()))
	if err == nil {
		err = unlogged(t.redeliver())
	}
	if err == nil {
		err = unlogged(t.fresh())
	}
	if err == nil {
		err = unlogged(g.advance())
	}
	return t.dst, t.buf, g.due, err
}
