package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/engine"
)

const (
	// subscribers are the clients of an engine run that follow a shard
	// each (subscriber j shard j mod shards) through an engine
	// subscription, live.
	subscribers = 2
	// pollShare is the chance, each step, that a subscriber reads what its
	// subscription holds; subscribeShare that one with none subscribes.
	pollShare      = 0.15
	subscribeShare = 0.2
	// reconnectShare is the chance, each step, that a subscriber drops its
	// subscription and resumes from the offset it is owed next (a client
	// that reconnects).
	reconnectShare = 0.0005
)

// subscriber is one live reader of a shard. Its subscription is at the
// broker the store named the shard's leader when it subscribed; it
// resumes, from the offset after the last record it was delivered, as a
// new subscription (check.Read's Subscription), once its broker stopped
// (a restart), the subscription ended, or it reconnects, and one that
// follows the routes once the store names another leader (a failover).
// One that does not (subscriber 1, as the cluster client does, which
// opens a subscription again only once it ended) stays at its broker
// across a failover, and reads there again if that broker leads again.
// Touched by the simulator's goroutine only.
type subscriber struct {
	j, shard      int
	followsRoutes bool
	sub           *engine.Subscription
	at            *broker
	eng           *engine.Engine // at's engine when it subscribed: another one is a restart
	name          string         // the subscription's name in the history
	from          uint64         // the subscription's first offset owed
	next          uint64         // the offset owed next: where it resumes
	count         int            // subscriptions made
}

// newSubscribers are an engine run's subscribers (none otherwise).
func newSubscribers(w *World) []*subscriber {
	if !w.cfg.Engine {
		return nil
	}
	var out []*subscriber
	for j := range subscribers {
		out = append(out, &subscriber{j: j, shard: j % len(w.cfg.Shards), followsRoutes: j == 0})
	}
	return out
}

// stepSubscribers lets each subscriber resume, subscribe or read.
func (l *workload) stepSubscribers() {
	for _, s := range l.subs {
		l.stepSubscriber(s)
	}
}

func (l *workload) stepSubscriber(s *subscriber) {
	w := l.w
	if s.sub != nil {
		why := ""
		switch {
		case !s.at.up() || s.at.engine != s.eng:
			why = s.at.id + " restarted"
		case s.followsRoutes && w.leaderOf(s.shard) != s.at:
			why = "the store names another leader"
		case w.rng.Float64() < reconnectShare:
			why = "a reconnect"
		}
		if why != "" {
			s.end(w, why)
		}
	}
	if s.sub == nil {
		if w.rng.Float64() < subscribeShare {
			l.subscribe(s)
		}
		return
	}
	if w.rng.Float64() < pollShare {
		l.poll(s)
	}
}

// subscribe subscribes s at the shard's leader (as the store names it)
// from the offset it is owed next.
func (l *workload) subscribe(s *subscriber) {
	w := l.w
	b := w.leaderOf(s.shard)
	if b == nil {
		return
	}
	sub, err := subscribeAt(b, s.shard, engine.SubscribeOptions{Start: engine.StartOffset, Offset: int64(s.next)})
	var oe *engine.OffsetError
	switch {
	case errors.As(err, &oe) && errors.Is(err, engine.ErrOffsetPastEnd) && !w.cfg.Shards[s.shard].Lossless():
		// The leader's log ends below what this subscriber was delivered
		// (a Leader or Periodic shard may lose what it acknowledged): it
		// resumes at that end, the records it holds from there are others.
		// (A lossless shard's end is past it once its leadership there
		// serves: it tries again.)
		w.trace.add("sub%d.%d at %s: owed %d, past the end %d: resumes there", s.j, s.count, b.id, s.next, oe.End)
		s.next = uint64(oe.End)
		return
	case err != nil:
		w.trace.add("sub%d at %s shard %d from %d: %v", s.j, b.id, s.shard, s.next, err)
		return
	}
	s.count++
	s.sub, s.at, s.eng, s.from = sub, b, b.engine, s.next
	s.name = fmt.Sprintf("sub%d.%d", s.j, s.count)
	w.stats.Subscriptions++
	w.trace.add("%s at %s shard %d from %d", s.name, b.id, s.shard, s.from)
}

// poll reads what s's subscription holds now, without waiting: one
// check.Read when it delivers records.
func (l *workload) poll(s *subscriber) {
	w := l.w
	buf, err := s.sub.Next(polled, nil, readBytesMax)
	if recs := appendRecords(nil, buf); len(recs) > 0 {
		h := w.rec[s.shard].Invoke(clients+s.j, w.nowNs(), check.Read{Shard: checkShard(s.shard), Subscription: s.name, From: s.from})
		h.Ok(w.nowNs(), check.Delivered{Records: recs})
		w.stats.Reads++
		w.stats.SubRecords += len(recs)
		s.next = recs[len(recs)-1].Offset + 1
		w.trace.add("op s%d/%d %s at %s: %d records %d..%d", s.shard, h.ID(), s.name, s.at.id, len(recs), recs[0].Offset, s.next-1)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		s.end(w, err.Error())
	}
}

// end closes s's subscription; it resumes from s.next.
func (s *subscriber) end(w *World, why string) {
	s.sub.Close()
	w.trace.add("%s at %s ends (%s): resumes from %d", s.name, s.at.id, why, s.next)
	s.sub, s.at, s.eng = nil, nil, nil
}
