package check

import (
	"fmt"
	"strings"
)

// Kind is a kind of anomaly. The queue kinds are named as Jepsen's Kafka
// checker names them.
type Kind uint8

const (
	// LostWrite: a publish acknowledged at offset o, a record above o read on
	// its shard by a subscription owed o, and the value never read.
	LostWrite Kind = iota
	// Unseen: a publish acknowledged, and the value absent from the final
	// reads of its shard.
	Unseen
	// InconsistentOffsets: two values seen at one offset of a shard (by
	// acknowledgements and reads).
	InconsistentOffsets
	// Duplicate: one value seen at two offsets (values meant unique).
	Duplicate
	// AbortedRead: a value read whose every publish definitely failed.
	AbortedRead
	// Unexpected: a value read that no operation published on that shard.
	Unexpected
	// PollSkip: a subscription delivered offset b after a (or first, owed from
	// a), skipping an offset between them known to hold a record.
	PollSkip
	// NonmonotonicPoll: a subscription delivered an offset at or below one it
	// had already delivered.
	NonmonotonicPoll
	// DoubleAck: two brokers acknowledged writes for one shard at one
	// generation.
	DoubleAck
	// LateAck: an acknowledgement sent outside the first 3L/4 of the lease it
	// relied on (or with no lease).
	LateAck
	// ReplicaDivergence: two replicas of a shard hold different records at an
	// offset below the quorum watermark.
	ReplicaDivergence
	// RolledBackRead: a record read at offset o, and the shard's final log
	// holding something else at o (or nothing).
	RolledBackRead
	// CacheNonlinearizable: a cache key's gets, puts, conditional puts and
	// deletes fit no sequential order consistent with real time.
	CacheNonlinearizable
	// CounterNonlinearizable: a counter's adds and gets fit no such order.
	CounterNonlinearizable
	// CursorNonlinearizable: a group cursor's commits and gets fit no such
	// order.
	CursorNonlinearizable
	// CounterBounds: a counter read (an add's sum or a get) outside what the
	// adds that may have been applied before it can sum to, at least once:
	// below what was definitely applied, or above what may have been.
	CounterBounds
	// AckAfterPromotion: an acknowledgement at generation g sent at or after
	// the start of a promotion of its shard to a generation above g (the
	// old leader acknowledged once the control plane had begun replacing
	// it: the lease rule broken).
	AckAfterPromotion

	kindCount
)

var kindNames = [kindCount]string{
	"lost-write", "unseen", "inconsistent-offsets", "duplicate", "aborted-read", "unexpected",
	"poll-skip", "nonmonotonic-poll", "double-ack", "late-ack", "replica-divergence",
	"rolled-back-read", "cache-nonlinearizable", "counter-nonlinearizable",
	"cursor-nonlinearizable", "counter-bounds", "ack-after-promotion",
}

func (k Kind) String() string {
	if k >= kindCount {
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// Kinds lists every kind, in order.
func Kinds() []Kind {
	out := make([]Kind, kindCount)
	for k := range kindCount {
		out[k] = k
	}
	return out
}

// examplesMax bounds the examples a report keeps of each kind.
const examplesMax = 3

// Example is one instance of an anomaly.
type Example struct {
	Kind Kind
	What string // what was seen, on one line
	Ops  []Op   // the operations involved (may be empty: a broker's event)
}

// Stats counts what was checked.
type Stats struct {
	Ops          int // operations in the history
	Publishes    int
	Acknowledged int // publishes Ok
	Reads        int // reads Ok
	Records      int // records those reads delivered
	Acks         int // broker acknowledgements
	Promotions   int // promotions' starts the acknowledgements were checked against
	ShardLogs    int
	Partitions   int // linearizability partitions (keys) checked with porcupine
	BoundsOnly   int // counter keys checked by the bounds alone (retried adds)
}

// Report is what Check found.
type Report struct {
	Counts   [kindCount]int
	Examples [kindCount][]Example
	Stats    Stats
}

// Valid is true when no anomaly of any kind was found.
func (r *Report) Valid() bool {
	for _, n := range r.Counts {
		if n != 0 {
			return false
		}
	}
	return true
}

// Count is how many anomalies of kind k were found.
func (r *Report) Count(k Kind) int { return r.Counts[k] }

func (r *Report) add(k Kind, what string, ops ...Op) {
	r.Counts[k]++
	if len(r.Examples[k]) < examplesMax {
		r.Examples[k] = append(r.Examples[k], Example{Kind: k, What: what, Ops: ops})
	}
}

// Summary is the report on one line: valid or not, the counts of the kinds
// found, and what was checked.
func (r *Report) Summary() string {
	s := r.Stats
	checked := fmt.Sprintf("%d ops (%d publishes, %d acknowledged; %d reads of %d records), %d broker acks, %d shard logs, %d linearizability partitions",
		s.Ops, s.Publishes, s.Acknowledged, s.Reads, s.Records, s.Acks, s.ShardLogs, s.Partitions)
	if s.Promotions > 0 {
		checked += fmt.Sprintf(", %d promotions", s.Promotions)
	}
	if s.BoundsOnly > 0 {
		checked += fmt.Sprintf(", %d counters by bounds only", s.BoundsOnly)
	}
	if r.Valid() {
		return "valid: " + checked
	}
	var found []string
	for k, n := range r.Counts {
		if n > 0 {
			found = append(found, fmt.Sprintf("%s %d", Kind(k), n))
		}
	}
	return "INVALID: " + strings.Join(found, ", ") + " over " + checked
}

// String is the Summary, then every example, each operation on a line.
func (r *Report) String() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	for _, examples := range r.Examples {
		for _, e := range examples {
			fmt.Fprintf(&b, "\n%s: %s", e.Kind, e.What)
			for _, op := range e.Ops {
				b.WriteString("\n\t" + op.String())
			}
		}
	}
	return b.String()
}
