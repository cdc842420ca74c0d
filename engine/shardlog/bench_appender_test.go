package shardlog

import (
	"time"

	"github.com/felixbroker/felix/bench"
)

// benchAck is what a benchAppender's Waiter hands back: when the committer
// acknowledged the append (ns since benchEpoch), and its error.
type benchAck struct {
	at  int64
	err error
}

// benchEpoch is the origin of the appenders' timestamps: durations from it
// read the monotonic clock.
var benchEpoch = time.Now()

func benchNow() int64 { return int64(time.Since(benchEpoch)) }

// benchAppender is one appending goroutine with its own reusable Waiter
// (itself) and at most window appends outstanding. window 1 is the strictly
// synchronous shape: append, wait for the ack, append again. A larger
// window issues appends back to back and waits only when window of them
// are unacknowledged (pipelining, as a connection with several batches in
// flight does). Nothing is allocated per append.
//
// Ownership: entries, sent, sendSlot, recvSlot and outstanding belong to
// the appending goroutine; the committer only sends on acks (capacity
// window, so Committed never blocks).
type benchAppender struct {
	log         *Log
	entries     []Entry // one batch, reused for every append
	recBytes    int
	window      int
	lane        *bench.Lane
	acks        chan benchAck
	sent        []int64 // start of each outstanding append, by slot
	sendSlot    int
	recvSlot    int
	outstanding int
}

func newBenchAppender(l *Log, value []byte, batch, window int, lane *bench.Lane) *benchAppender {
	a := &benchAppender{
		log: l, entries: make([]Entry, batch), recBytes: len(value), window: window, lane: lane,
		acks: make(chan benchAck, window), sent: make([]int64, window),
	}
	for i := range a.entries {
		a.entries[i].Value = value
	}
	return a
}

// Committed is the Waiter: it stamps the acknowledgement and hands it to
// the appending goroutine. It runs on the committer and never blocks.
func (a *benchAppender) Committed(_, _ int64, err error) {
	a.acks <- benchAck{at: benchNow(), err: err}
}

// run makes n appends and waits for every acknowledgement.
func (a *benchAppender) run(n int) error {
	for range n {
		if err := a.appendOne(); err != nil {
			return err
		}
	}
	return a.drain()
}

// runUntil appends until deadline (benchNow's clock), then waits for every
// acknowledgement.
func (a *benchAppender) runUntil(deadline int64) error {
	for benchNow() < deadline {
		if err := a.appendOne(); err != nil {
			return err
		}
	}
	return a.drain()
}

// appendOne makes one append, first waiting for the oldest one's
// acknowledgement when window appends are outstanding.
func (a *benchAppender) appendOne() error {
	if a.outstanding == a.window {
		if err := a.await(); err != nil {
			return err
		}
		a.outstanding--
	}
	a.sent[a.sendSlot] = benchNow()
	a.sendSlot = (a.sendSlot + 1) % a.window
	if _, err := a.log.Append(a.entries, 1, a); err != nil {
		return err
	}
	a.outstanding++
	return nil
}

// drain waits for every outstanding acknowledgement.
func (a *benchAppender) drain() error {
	for ; a.outstanding > 0; a.outstanding-- {
		if err := a.await(); err != nil {
			return err
		}
	}
	return nil
}

// await takes the oldest outstanding append's acknowledgement (a log
// acknowledges one appender's appends in order) and records its latency
// once for every record of the batch.
func (a *benchAppender) await() error {
	ack := <-a.acks
	if ack.err != nil {
		return ack.err
	}
	records := int64(len(a.entries))
	a.lane.RecordN(time.Duration(ack.at-a.sent[a.recvSlot]), records)
	a.lane.Count(records, records*int64(a.recBytes))
	a.recvSlot = (a.recvSlot + 1) % a.window
	return nil
}
