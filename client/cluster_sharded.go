package client

import (
	"context"
	"errors"
	"iter"
	"maps"
	"sync"
)

// ShardedOptions configure SubscribeSharded. Start applies to every shard
// From does not name; QueueCapacity, Overflow and Buffer to each shard's
// subscription, as SubscribeOptions.
type ShardedOptions struct {
	Start Start
	// From resumes shards at offsets, one per shard: what Offsets
	// returned. A shard it names starts at FromOffset(From[shard]).
	From          map[int]int64
	QueueCapacity uint32
	Overflow      Overflow
	Buffer        int
	// Until stops each shard where SubscribeOptions.Until says: with
	// UntilEnd, at its end as it was when the shard's subscription was
	// first opened (a shard opened again keeps that end). Once every shard
	// is there, Next returns an error matching ErrEndReached.
	Until Until
}

// ShardedSubscription reads every shard of a stream: one Subscription per
// shard, each at its shard's leader, merged. It promises per-shard order
// only: two events of one shard come in offset order, events of different
// shards in whatever order they arrive (merging cannot restore an order
// that never existed). Each Event carries its Shard and Offset.
//
// A shard whose subscription ends for a reason another attempt can fix
// (its broker lost, the shard moved, not_found from a leader promoted a
// moment ago, a lag the broker ended it for) is opened again at its own
// leader from the offset after the last event it delivered, while the
// other shards keep delivering; it keeps trying, under the RetryPolicy in
// rounds, until it is back or Close. Stats say which shards are being
// re-established. A failure no attempt can fix ends the whole
// subscription with a *ShardError naming the shard.
//
// Next and Events are for one reader at a time; Offsets, Stats and Close
// are safe from any goroutine.
type ShardedSubscription struct {
	c      *ClusterClient
	stream Stream
	opts   SubscribeOptions
	items  chan Event // events of every shard, merged
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex    // guards the fields below
	next     map[int]int64 // per shard: the offset after the last event Next returned
	reopened map[int]int64 // per shard: times it was opened again
	down     map[int]bool  // shards being re-established now
	atEnd    map[int]bool  // shards whose Until's end is reached
	err      error         // what ended it
}

// SubscribeSharded opens one subscription per shard of stream, each at its
// shard's leader following its own redirect, and merges them. If a shard
// cannot be opened (no broker serving it answers within the RetryPolicy)
// the whole subscription is refused with a *ShardError naming it, rather
// than covering some shards and not others.
func (c *ClusterClient) SubscribeSharded(ctx context.Context, stream Stream, opts ShardedOptions) (*ShardedSubscription, error) {
	info, err := c.DescribeStream(ctx, stream)
	if err != nil {
		return nil, err
	}
	buffer := opts.Buffer
	if buffer <= 0 {
		buffer = DefaultSubscribeBuffer
	}
	s := &ShardedSubscription{c: c, stream: stream, items: make(chan Event, buffer),
		opts: SubscribeOptions{QueueCapacity: opts.QueueCapacity, Overflow: opts.Overflow, Buffer: opts.Buffer, Until: opts.Until},
		next: map[int]int64{}, reopened: map[int]int64{}, down: map[int]bool{}, atEnd: map[int]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	subs := make([]*Subscription, 0, len(info.Shards))
	for shard := range len(info.Shards) {
		so := s.opts
		so.Start = opts.Start
		if off, ok := opts.From[shard]; ok {
			so.Start = FromOffset(off)
		}
		sub, err := c.Subscribe(ctx, stream, shard, so)
		if err != nil {
			for _, o := range subs {
				_ = o.Close()
			}
			s.cancel()
			return nil, err
		}
		subs = append(subs, sub)
		s.next[shard] = sub.FirstOffset()
	}
	if err := c.track(s); err != nil {
		for _, o := range subs {
			_ = o.Close()
		}
		s.cancel()
		return nil, err
	}
	for _, sub := range subs {
		s.wg.Add(1)
		go s.pump(sub)
	}
	return s, nil
}

// track adds s to what Close ends.
func (c *ClusterClient) track(s *ShardedSubscription) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.subs[s] = struct{}{}
	return nil
}

// pump moves one shard's events into the merge, opening the shard again
// when its subscription ends in a way another attempt can fix. It owns
// sub, and closes the last one.
func (s *ShardedSubscription) pump(sub *Subscription) {
	defer s.wg.Done()
	shard := sub.Shard()
	defer func() { _ = sub.Close() }()
	for {
		ev, err := sub.Next(s.ctx)
		if err == nil {
			select {
			case s.items <- ev:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		if s.ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrEndReached) {
			s.reached(shard)
			return
		}
		var end *SubscriptionEndedError
		if !errors.As(err, &end) || !resumable(err) {
			s.end(&ShardError{Shard: shard, Err: err})
			return
		}
		_ = sub.Close()
		until := s.opts.Until
		if at, ok := sub.EndOffset(); ok {
			until = UntilOffset(at) // the end it had, not the shard's end now
		}
		if sub = s.reopen(shard, end.ResumeOffset, until); sub == nil {
			return
		}
	}
}

// reopen opens shard again from offset at its leader, round after round
// of the RetryPolicy, until it is back (nil: the subscription ended).
func (s *ShardedSubscription) reopen(shard int, offset int64, until Until) *Subscription {
	s.mark(shard, true)
	defer s.mark(shard, false)
	so := s.opts
	so.Start, so.Until = FromOffset(offset), until
	for {
		sub, err := s.c.Subscribe(s.ctx, s.stream, shard, so)
		if err == nil {
			s.mu.Lock()
			s.reopened[shard]++
			s.mu.Unlock()
			return sub
		}
		if s.ctx.Err() != nil {
			return nil
		}
		if !resumable(err) {
			s.end(err)
			return nil
		}
		// Between rounds, a full-jitter wait under the largest ceiling:
		// a policy of one attempt must not spin.
		p := s.c.opts.retry.withDefaults()
		if s.c.opts.clock.Sleep(s.ctx, p.Backoff(p.Attempts+32, s.c.opts.randN)) != nil {
			return nil
		}
	}
}

func (s *ShardedSubscription) mark(shard int, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if down {
		s.down[shard] = true
	} else {
		delete(s.down, shard)
	}
}

// reached records that shard is at its Until's end; the last shard there
// ends the subscription with ErrEndReached.
func (s *ShardedSubscription) reached(shard int) {
	s.mu.Lock()
	s.atEnd[shard] = true
	all := len(s.atEnd) == len(s.next)
	s.mu.Unlock()
	if all {
		s.end(ErrEndReached)
	}
}

// end ends the subscription with err, unless it has ended.
func (s *ShardedSubscription) end(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.cancel()
}

// Stream is the stream read.
func (s *ShardedSubscription) Stream() Stream { return s.stream }

// Next waits for the next event of any shard, within ctx. Once the
// subscription has ended it returns what ended it (after the events
// already merged): a *ShardError, ErrClosed after Close, or ErrEndReached
// once every shard is at its Until's end.
func (s *ShardedSubscription) Next(ctx context.Context) (Event, error) {
	select {
	case ev := <-s.items:
		return s.took(ev), nil
	default:
	}
	select {
	case ev := <-s.items:
		return s.took(ev), nil
	case <-s.ctx.Done():
		select {
		case ev := <-s.items:
			return s.took(ev), nil
		default:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return Event{}, s.err
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

func (s *ShardedSubscription) took(ev Event) Event {
	s.mu.Lock()
	s.next[ev.Shard] = ev.Offset + 1
	s.mu.Unlock()
	return ev
}

// Events iterates the merged events, as Subscription.Events does; the
// last pair carries the error that ended the iteration.
func (s *ShardedSubscription) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := s.Next(ctx)
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Offsets are where to resume, one offset per shard: after the last event
// Next returned of it, or where it started if none. ShardedOptions.From
// takes them back, missing nothing retention still holds.
func (s *ShardedSubscription) Offsets() map[int]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.next)
}

// ShardedStats are a sharded subscription's counters.
type ShardedStats struct {
	Shards int
	// Reopened counts, per shard, the times it was opened again after its
	// subscription ended.
	Reopened map[int]int64
	// Down lists the shards being re-established now.
	Down []int
}

// Stats returns the subscription's counters.
func (s *ShardedSubscription) Stats() ShardedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ShardedStats{Shards: len(s.next), Reopened: maps.Clone(s.reopened)}
	for sh := range s.down {
		st.Down = append(st.Down, sh)
	}
	return st
}

// Close ends every shard's subscription; Next then returns ErrClosed.
// Closing twice is harmless.
func (s *ShardedSubscription) Close() error {
	s.end(ErrClosed)
	s.wg.Wait()
	s.c.mu.Lock()
	delete(s.c.subs, s)
	s.c.mu.Unlock()
	return nil
}
