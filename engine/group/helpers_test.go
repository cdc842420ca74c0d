package group

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

var sid = engine.StreamID{Tenant: "acme", Namespace: "orders", Name: "created"}

func key(group string) Key { return Key{Stream: sid, Shard: 0, Group: group} }

// fixture is an engine on a MemFS with one durable stream, and a Manager
// on a fake clock.
type fixture struct {
	t      testing.TB
	fs     *vfs.MemFS
	efs    *errorfs.FS // when set, the engine's FS: fs behind an error-injecting wrapper
	clock  *fakeClock
	owner  *switchOwner
	eng    *engine.Engine
	stream *engine.Stream
	m      *Manager
	opts   Options
	cfg    engine.StreamConfig
	rep    engine.Replication // the engine's, for a replicated stream (replicated_helpers_test.go)
}

func newFixture(t testing.TB, opts Options) *fixture {
	return newFixtureWith(t, opts, engine.StreamConfig{Durable: true})
}

func newFixtureWith(t testing.TB, opts Options, cfg engine.StreamConfig) *fixture {
	t.Helper()
	f := &fixture{t: t, fs: vfs.NewMem(), clock: newFakeClock(), owner: &switchOwner{local: true}, opts: opts, cfg: cfg}
	f.open()
	t.Cleanup(func() { f.eng.Close() })
	return f
}

func (f *fixture) open() {
	f.t.Helper()
	var fsys vfs.FS = f.fs
	if f.efs != nil {
		fsys = f.efs
	}
	e, err := engine.Open(engine.Options{FS: fsys, Dir: "/data", Fsync: shardlog.OnCommit(), SegmentBytes: 4 << 10, Owner: f.owner,
		Replication: f.rep})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := e.Stream(sid); err != nil {
		if _, err := e.CreateStream(sid, f.cfg); err != nil {
			f.t.Fatalf("%T %v", err, err)
		}
	}
	f.eng = e
	f.stream, _ = e.Stream(sid)
	opts := f.opts
	opts.Clock = f.clock
	f.m = New(e, opts)
}

// restart closes the broker cleanly and opens it again from its disk.
func (f *fixture) restart() {
	f.t.Helper()
	if err := f.m.Close(); err != nil {
		f.t.Fatal(err)
	}
	if err := f.eng.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.open()
}

// publish appends n records "v<first>".. and waits for them.
func (f *fixture) publish(n int) {
	f.t.Helper()
	sh, _ := f.stream.Shard(0)
	first := sh.End()
	recs := make([]engine.Record, n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, "v%d", first+int64(i))
	}
	w := &pubWaiter{done: make(chan error, 1)}
	if err := f.stream.Publish(recs, w); err != nil {
		f.t.Fatal(err)
	}
	select {
	case err := <-w.done:
		if err != nil {
			f.t.Fatalf("%T %v", err, err)
		}
	case <-time.After(10 * time.Second):
		f.t.Fatal("publish never acknowledged")
	}
}

type pubWaiter struct{ done chan error }

func (w *pubWaiter) Published(_ []engine.AckRun, err error) { w.done <- err }

// poll polls without waiting and fails the test on an error.
func (f *fixture) poll(group, consumer string, max int) []Delivery {
	f.t.Helper()
	d, err := f.m.Poll(context.Background(), PollRequest{Key: key(group), Consumer: consumer, Max: max})
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *fixture) ack(group, consumer string, offsets ...int64) {
	f.t.Helper()
	if err := f.m.Ack(key(group), consumer, offsets); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) describe(group string) Description {
	f.t.Helper()
	d, err := f.m.Describe(key(group))
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func offsets(ds []Delivery) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.Offset
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for o := from; o < to; o++ {
		out = append(out, o)
	}
	return out
}

// fakeClock is a Clock the test moves; its timers fire when it passes them.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
	added  chan struct{} // a token per timer created, for waitTimer
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0), timers: map[*fakeTimer]struct{}{}, added: make(chan struct{}, 1<<16)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
	} else {
		c.timers[t] = struct{}{}
	}
	c.added <- struct{}{}
	return t
}

// advance moves the clock and fires every timer it passes.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.at.After(c.now) {
			t.ch <- c.now
			delete(c.timers, t)
		}
	}
}

// waitTimer waits until some goroutine has made a timer since the last
// call: a long poll has gone to sleep.
func (c *fakeClock) waitTimer(t testing.TB) {
	t.Helper()
	select {
	case <-c.added:
	case <-time.After(10 * time.Second):
		t.Fatal("no poll went to sleep")
	}
}

// drainTimers forgets the timers made so far.
func (c *fakeClock) drainTimers() {
	for {
		select {
		case <-c.added:
		default:
			return
		}
	}
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	ch chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	delete(t.c.timers, t)
	return ok
}

// switchOwner is an Ownership the test turns on and off.
type switchOwner struct {
	mu    sync.Mutex
	local bool
}

func (o *switchOwner) set(local bool) {
	o.mu.Lock()
	o.local = local
	o.mu.Unlock()
}

func (o *switchOwner) Leader(engine.StreamID, int) (bool, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.local {
		return true, ""
	}
	return false, "b2:7000"
}

func sorted(a []int64) []int64 {
	b := append([]int64(nil), a...)
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	return b
}

// settled waits until no record of the group is being dead-lettered: the
// dead-letter log has answered for each and the group applied it.
func (f *fixture) settled(name string) {
	f.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		sg, err := f.m.shardOf(key(name))
		if err != nil {
			f.t.Fatalf("%T %v", err, err)
		}
		sg.mu.RLock()
		g := sg.groups[name]
		sg.mu.RUnlock()
		wake := g.wake.wait()
		g.mu.Lock()
		if err := g.applyCommits(); err != nil {
			f.t.Fatal(err)
		}
		dying := 0
		for i := 0; i < g.win.len(); i++ {
			if g.win.at(i).state == slotDying {
				dying++
			}
		}
		for _, s := range g.again {
			if s.state == slotDying {
				dying++
			}
		}
		g.mu.Unlock()
		if dying == 0 {
			return
		}
		select {
		case <-wake:
		case <-deadline:
			f.t.Fatalf("%d dead letters never became durable", dying)
		}
	}
}

// pollAsync polls with a wait in a goroutine, once the clock's earlier
// timers are forgotten; the result arrives on the channel.
func (f *fixture) pollAsync(ctx context.Context, group, consumer string, wait time.Duration) <-chan pollResult {
	f.clock.drainTimers()
	out := make(chan pollResult, 1)
	go func() {
		d, err := f.m.Poll(ctx, PollRequest{Key: key(group), Consumer: consumer, Max: 10, Wait: wait})
		out <- pollResult{d, err}
	}()
	return out
}

type pollResult struct {
	d   []Delivery
	err error
}

func receive(t testing.TB, ch <-chan pollResult) pollResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the poll never returned")
		return pollResult{}
	}
}

// crash kills the broker as a machine crash would (only what was synced
// survives) and starts it again on what the disk kept.
func (f *fixture) crash() {
	f.t.Helper()
	img := f.fs.Crash(vfs.DropUnsynced)
	f.m.Close()
	f.eng.Close()
	f.fs = img
	f.open()
}
