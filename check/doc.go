// Package check judges a history of what a cluster's clients and brokers
// did: one checker, used by the simulator and by the real-process nemesis
// runs, so that both are held to the same rules.
//
// # What it is for
//
// A caller records operations as they happen (a [Recorder]: Invoke returns
// a [Handle], whose Ok, Fail or Unknown completes the operation), and
// beside them the events only a broker or the control plane sees ([Ack],
// [ShardLogs], [Promotion]). [Check]
// then reads the whole [History] and returns a [Report]: a count of every
// [Kind] of anomaly, a few examples of each with the operations involved,
// and a one-line Summary. Report.Valid is true only when every count is
// zero.
//
// The kinds, and what each means, are listed where [Kind] is declared and
// in docs/reliability.md. In short:
//
//	queue         lost-write, unseen, inconsistent-offsets, duplicate,
//	              aborted-read, unexpected, poll-skip, nonmonotonic-poll
//	replication   double-ack, late-ack, replica-divergence, rolled-back-read,
//	              ack-after-promotion
//	models        cache-nonlinearizable, counter-nonlinearizable,
//	              cursor-nonlinearizable, counter-bounds
//
// # Outcomes
//
// An operation is Ok (it happened, and carries what was observed), Fail
// (it definitely did not happen: the client was told so by an answer that
// says nothing was applied), Unknown (it may or may not have happened: a
// timeout, a lost connection, an ambiguous refusal) or still pending at the
// end, which counts as Unknown. A caller that cannot tell must say
// Unknown: calling an applied write Fail makes the checker report an
// aborted read when the write is found.
//
// # What it must never do
//
// Check is pure: no IO, no clock, no randomness. It starts no goroutine of
// its own (porcupine, which it calls for the linearizability checks, runs
// one per partition and is done with them when it returns). Times are the
// caller's: the Recorder numbers invocations and completions with its own
// monotonic sequence (the logical time the linearizability checks order
// operations by) and keeps the int64 time the caller supplies beside it
// (what the lease checks read, and what a report prints). The checks that
// compare events of several brokers and the control plane (an Ack's Time
// against a Promotion's) need one clock for all of them: the simulator's,
// or CLOCK_MONOTONIC for processes on one host. The same history always
// gives the same report.
//
// # Invariants
//
//   - A History is only ever appended to: an operation's index is its id,
//     and every sequence number is unique and increasing.
//   - An operation is completed once; completing it twice, or with an output
//     of the wrong type for its input, is a bug in the caller and panics.
//   - Check does not modify the history it is given.
//   - Values meant unique are unique: a publish's value names one record
//     (unless Options.ReusedValues says otherwise), and a cache put writes a
//     value no other put writes.
//
// # Concurrency
//
// A Recorder and its Handles are safe for concurrent use (one mutex, held
// only to append). A History returned by Recorder.History is a copy the
// caller owns; Check and Report are not safe to share while mutated.
package check
