package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// ViewConfig configures StartView.
type ViewConfig struct {
	Store store.Store
	// Local is this broker on its current disk: the shards whose replicas
	// name it are this broker's. Both fields are required.
	Local cluster.Replica
	// RetryDelay is the wait before reading the store again after it
	// failed; 0 is RetryDelayDefault.
	RetryDelay time.Duration
	// Clock times the retries; nil is store.SystemClock().
	Clock  store.Clock
	Logger *slog.Logger
}

func (c *ViewConfig) defaults() {
	if c.RetryDelay <= 0 {
		c.RetryDelay = RetryDelayDefault
	}
	if c.Clock == nil {
		c.Clock = store.SystemClock()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// View is a broker's view of the cluster: the registered brokers, the
// catalog and every shard's assignment, read once and then followed by a
// watch (read again when the watch falls behind a compaction or fails).
// It is the broker's engine.Ownership (Leader) and engine.Placement
// (Holds), tells the routing who leads a shard (LeaderBroker) and the peer
// transport where a broker listens (PeerAddr), tells it which shards to
// open (Local, Changed), waits for an object (AwaitObject), says when it
// has seen the state once (Ready) and reports it all (Status). Its methods
// are safe for concurrent use.
type View struct {
	cfg    ViewConfig
	cancel context.CancelFunc
	done   chan struct{}
	ready  atomic.Bool

	owners atomic.Pointer[owners] // published by the goroutine, read by Leader, Holds, LeaderBroker

	mu      sync.RWMutex
	state   viewState
	changed chan struct{} // closed and replaced at every change
}

// StartView starts following the store on its own goroutine, until Close.
func StartView(cfg ViewConfig) (*View, error) {
	cfg.defaults()
	if cfg.Store == nil || cfg.Local.Broker == "" || cfg.Local.DiskID == "" {
		return nil, fmt.Errorf("%w: a view needs a store, a broker id and a disk id", ErrInvalid)
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &View{cfg: cfg, cancel: cancel, done: make(chan struct{}), state: newViewState(), changed: make(chan struct{})}
	v.owners.Store(&owners{})
	go v.run(ctx)
	return v, nil
}

// Close stops following the store and returns once its goroutine has.
// What the view holds stays readable. Safe to call more than once.
func (v *View) Close() {
	v.cancel()
	<-v.done
}

// Ready reports whether the view has read the store's state at least
// once (a broker is not ready before: it does not know what it leads).
func (v *View) Ready() bool { return v.ready.Load() }

// Changed returns a channel closed at the view's next change. Take it
// before reading the view, and nothing is missed:
//
//	for {
//		changed := v.Changed()
//		open(v.Local())
//		<-changed
//	}
func (v *View) Changed() <-chan struct{} {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.changed
}

// run reads and follows the store until ctx is done.
func (v *View) run(ctx context.Context) {
	defer close(v.done)
	for {
		err := v.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, store.ErrCompacted) {
			v.cfg.Logger.Info("cluster view fell behind a compaction; reading the state again", "err", err)
			continue
		}
		v.cfg.Logger.Warn("cluster view lost the store; reading it again", "err", err, "retry_in", v.cfg.RetryDelay)
		if sleep(ctx, v.cfg.Clock, v.cfg.RetryDelay) != nil {
			return
		}
	}
}

// follow reads the state at one revision R, then applies the watch from
// R+1 until it fails.
func (v *View) follow(ctx context.Context) error {
	read := func(kvs []store.KV, rev int64) bool {
		v.replace(kvs, rev)
		return false
	}
	apply := func(events []store.Event) bool {
		v.update(events)
		return false
	}
	return followPrefix(ctx, v.cfg.Store, Root, read, apply)
}

// replace takes a state read whole.
func (v *View) replace(kvs []store.KV, rev int64) {
	st := newViewState()
	for _, kv := range kvs {
		_, err := st.put(kv)
		v.logBad(err)
	}
	st.revision = rev
	o := buildOwners(&st, v.cfg.Local)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.state = st
	v.owners.Store(&o)
	v.ready.Store(true)
	v.notifyLocked()
}

// update applies a batch of changes.
func (v *View) update(events []store.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	touched, brokers := map[cluster.ObjectID]bool{}, false
	for _, ev := range events {
		k, err := v.state.apply(ev)
		v.logBad(err)
		v.state.revision = max(v.state.revision, ev.Revision())
		switch k.kind {
		case keyBroker:
			brokers = true
		case keyAssignment, keyCatalog: // Holds reads the entry's incarnation
			touched[k.shard.Object] = true
		}
	}
	var o owners
	if brokers {
		o = buildOwners(&v.state, v.cfg.Local)
	} else {
		o = v.owners.Load().with(&v.state, v.cfg.Local, touched)
	}
	v.owners.Store(&o)
	v.notifyLocked()
}

func (v *View) notifyLocked() {
	close(v.changed)
	v.changed = make(chan struct{})
}

// logBad logs what the view could not read: it is left out, as if absent.
func (v *View) logBad(err error) {
	if err != nil {
		v.cfg.Logger.Error("cluster view: a key it cannot read is left out", "err", err)
	}
}
