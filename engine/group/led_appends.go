package group

import (
	"errors"
	"sync"

	"github.com/felixbroker/felix/engine/shardlog"
)

// ledAppends is where a held log's next append under this broker's
// leadership goes, and the generation of the record before it: set when
// the groups are built at a generation (and when the log is reopened),
// moved by each append. An append goes there with AppendAt, so one that
// races the replica (which, once this broker no longer leads, appends its
// new leader's records and truncates) is refused rather than placed among
// them: the log moved, and this broker no longer leads.
type ledAppends struct {
	mu      sync.Mutex // held across the AppendAt, so appends of several groups take turns
	next    int64
	prevGen uint32
}

// resetLed starts this leadership's appends at the end of lg, whose
// appends are all visible.
func (l *groupLog) resetLed(lg *shardlog.Log) {
	l.led.mu.Lock()
	l.led.next, l.led.prevGen = lg.End(), lg.LastGeneration()
	l.led.mu.Unlock()
}

// appendLed appends entries to lg, a held log, at gen, where this
// leadership's last append ended; a log that moved since refuses them
// (*engine.NotLeaderError).
func (l *groupLog) appendLed(lg *shardlog.Log, entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (int64, error) {
	l.led.mu.Lock()
	defer l.led.mu.Unlock()
	at := l.led.next
	if err := lg.AppendAt(at, l.led.prevGen, entries, gen, w); err != nil {
		return 0, l.appendRefusal(err)
	}
	l.led.next, l.led.prevGen = at+int64(len(entries)), gen
	return at, nil
}

// appendRefusal is what an AppendAt's err tells the group: a log that moved
// under it says this broker no longer leads, or that its replica put
// records in the log while it leads (a catch-up), and the groups serve
// again only once rebuilt from the log (lead); another error is the
// log's.
func (l *groupLog) appendRefusal(err error) error {
	var moved *shardlog.DivergenceError
	if errors.As(err, &moved) || errors.Is(err, shardlog.ErrStaleGeneration) {
		l.sg.moved.Store(true)
		return l.sg.notLeader()
	}
	return err
}

// waitChan is a Waiter that sends the outcome on itself (buffered 1).
type waitChan chan error

func (w waitChan) Committed(_, _ int64, err error) { w <- err }
