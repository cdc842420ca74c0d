package check

import (
	"fmt"
	"strings"
)

// Outcome is how an operation ended.
type Outcome uint8

const (
	// Pending: invoked, never completed. Read as Unknown.
	Pending Outcome = iota
	// Ok: it happened, and its Output says what was observed.
	Ok
	// Fail: it definitely did not happen.
	Fail
	// Unknown: it may or may not have happened.
	Unknown
)

func (o Outcome) String() string {
	return [...]string{"pending", "ok", "fail", "unknown"}[o]
}

// Input is what an operation was asked to do: one of [Publish], [Read],
// [KVInput], [CounterInput], [CursorInput].
type Input interface {
	describe() string
	// accepts reports whether out is the Output type this Input's Ok carries.
	accepts(out Output) bool
}

// Output is what an Ok operation observed: one of [Published],
// [Delivered], [KVOutput], [CounterOutput], [CursorOutput].
type Output interface {
	describe() string
}

// Op is one operation of a history.
type Op struct {
	ID      int // its index in History.Ops
	Process int // the client that made it; one operation at a time each
	Input   Input
	Outcome Outcome
	Output  Output // Ok only
	Note    string // Fail and Unknown: why, for a report
	// InvokeSeq and CompleteSeq are the Recorder's sequence numbers;
	// CompleteSeq is 0 while Pending.
	InvokeSeq, CompleteSeq int64
	// InvokeTime and CompleteTime are the caller's times.
	InvokeTime, CompleteTime int64
}

// String describes the operation on one line, for a report.
func (o Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "op %d p%d %s -> %s", o.ID, o.Process, o.Input.describe(), o.Outcome)
	if o.Outcome == Ok && o.Output != nil {
		b.WriteString(" " + o.Output.describe())
	}
	if o.Note != "" {
		fmt.Fprintf(&b, " (%s)", o.Note)
	}
	fmt.Fprintf(&b, " [t %d..%d]", o.InvokeTime, o.CompleteTime)
	return b.String()
}

// mayHaveHappened is true unless the operation definitely did not.
func (o Op) mayHaveHappened() bool { return o.Outcome != Fail }

// History is everything recorded of a run: the clients' operations and
// what the brokers reported.
type History struct {
	Ops  []Op
	Acks []Ack
	Logs []ShardLogs
	// Promotions are the starts of the control plane's promotions, which
	// the Acks are checked against (AckAfterPromotion).
	Promotions []Promotion
}

// Shard names one shard of one stream (or cache).
type Shard struct {
	Stream string
	Index  uint32
}

func (s Shard) String() string { return fmt.Sprintf("%s/%d", s.Stream, s.Index) }
