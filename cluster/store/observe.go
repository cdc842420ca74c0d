package store

import (
	"bytes"
	"context"
)

// Observer follows an election's leader from one watch: it keeps the
// candidates it has seen (key to create revision) and reports each change
// of the oldest. Next is called from one goroutine at a time.
type Observer struct {
	watch      Watch
	candidates map[string]KV
	last       KV
	reported   bool
}

// Observe starts following election's leader.
func Observe(ctx context.Context, s Store, election string) (*Observer, error) {
	kvs, rev, err := s.Range(ctx, electionPrefix(election))
	if err != nil {
		return nil, err
	}
	w, err := s.Watch(ctx, electionPrefix(election), rev+1)
	if err != nil {
		return nil, err
	}
	o := &Observer{watch: w, candidates: make(map[string]KV, len(kvs))}
	for _, kv := range kvs {
		o.candidates[kv.Key] = kv
	}
	return o, nil
}

// Next returns the leader, the first time at once and then each time a
// batch of the watch changes it (another key, a new epoch or a new value;
// changes within one batch are seen as one); the zero KV when the election
// has no candidate left. A watch error ends the observer.
func (o *Observer) Next(ctx context.Context) (KV, error) {
	for {
		if leader := o.leader(); !o.reported || !sameLeader(leader, o.last) {
			o.last, o.reported = leader, true
			return leader, nil
		}
		events, err := o.watch.Next(ctx)
		if err != nil {
			return KV{}, err
		}
		o.apply(events)
	}
}

// Close ends the observer's watch.
func (o *Observer) Close() { o.watch.Close() }

func (o *Observer) apply(events []Event) {
	for _, ev := range events {
		if ev.Kind == EventDelete {
			delete(o.candidates, ev.KV.Key)
			continue
		}
		o.candidates[ev.KV.Key] = ev.KV
	}
}

func (o *Observer) leader() KV {
	var leader KV
	for _, kv := range o.candidates {
		if !leader.Exists() || kv.CreateRevision < leader.CreateRevision {
			leader = kv
		}
	}
	return leader
}

func sameLeader(a, b KV) bool {
	return a.Key == b.Key && a.CreateRevision == b.CreateRevision && bytes.Equal(a.Value, b.Value)
}
