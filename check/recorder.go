package check

import (
	"fmt"
	"slices"
	"sync"
)

// Recorder builds a History as clients act. Safe for concurrent use.
type Recorder struct {
	mu  sync.Mutex
	seq int64
	h   History
}

// Handle completes one invoked operation. Safe for concurrent use, but an
// operation is completed once.
type Handle struct {
	r  *Recorder
	id int
}

// Invoke records that process began an operation at the caller's time.
func (r *Recorder) Invoke(process int, time int64, in Input) Handle {
	if in == nil {
		panic("felix/check: Invoke with a nil Input")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	id := len(r.h.Ops)
	r.h.Ops = append(r.h.Ops, Op{ID: id, Process: process, Input: in, InvokeSeq: r.seq, InvokeTime: time})
	return Handle{r: r, id: id}
}

// Ok records that the operation happened and observed out.
func (h Handle) Ok(time int64, out Output) { h.complete(time, Ok, out, "") }

// Fail records that the operation definitely did not happen, and why.
func (h Handle) Fail(time int64, why string) { h.complete(time, Fail, nil, why) }

// Unknown records that the operation may or may not have happened, and why.
func (h Handle) Unknown(time int64, why string) { h.complete(time, Unknown, nil, why) }

// ID is the operation's index in the history.
func (h Handle) ID() int { return h.id }

func (h Handle) complete(time int64, outcome Outcome, out Output, why string) {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	op := &r.h.Ops[h.id]
	if op.Outcome != Pending {
		panic(fmt.Sprintf("felix/check: %s completed again as %s: a bug in the caller", op, outcome))
	}
	if outcome == Ok && (out == nil || !op.Input.accepts(out)) {
		panic(fmt.Sprintf("felix/check: %s completed with output %T: a bug in the caller", op, out))
	}
	r.seq++
	op.Outcome, op.Output, op.Note = outcome, out, why
	op.CompleteSeq, op.CompleteTime = r.seq, time
}

// Ack records a broker's acknowledgement of a write.
func (r *Recorder) Ack(a Ack) {
	r.mu.Lock()
	r.h.Acks = append(r.h.Acks, a)
	r.mu.Unlock()
}

// Promotion records the start of a shard's promotion.
func (r *Recorder) Promotion(p Promotion) {
	r.mu.Lock()
	r.h.Promotions = append(r.h.Promotions, p)
	r.mu.Unlock()
}

// Logs records a shard's replicas' logs, taken at the end of a run.
func (r *Recorder) Logs(l ShardLogs) {
	r.mu.Lock()
	r.h.Logs = append(r.h.Logs, l)
	r.mu.Unlock()
}

// History is a copy of what was recorded so far, which the caller owns
// (the Inputs and Outputs themselves are shared: treat them as read-only).
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return History{Ops: slices.Clone(r.h.Ops), Acks: slices.Clone(r.h.Acks), Logs: slices.Clone(r.h.Logs),
		Promotions: slices.Clone(r.h.Promotions)}
}
