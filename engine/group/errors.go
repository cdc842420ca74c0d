package group

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Errors a caller can test with errors.Is. The network layer maps each to
// a stable wire code. Not-leader is the engine's *engine.NotLeaderError.
var (
	ErrClosed        = errors.New("felix/group: closed")
	ErrNotDurable    = errors.New("felix/group: groups need a durable stream")
	ErrNotFound      = errors.New("felix/group: no such group")
	ErrExists        = errors.New("felix/group: group already exists")
	ErrInvalid       = errors.New("felix/group: invalid request")
	ErrTooManyGroups = errors.New("felix/group: too many groups on the shard")
	// ErrNotClaimed matches a *ClaimError: an ack, nack, extend or reject
	// of records this consumer does not hold.
	ErrNotClaimed = errors.New("felix/group: record not claimed by this consumer")
	// ErrNotDead is a redrive of an offset that is not a dead letter.
	ErrNotDead = errors.New("felix/group: not a dead letter")
)

// ClaimError lists the offsets of an Ack, Nack, Extend or Reject that were
// refused because the consumer does not hold them: another consumer's
// claim stands on them, they were never delivered, their claim lapsed and
// was processed (Nack, Extend), or they are being dead-lettered. Every
// other offset of the call was applied.
type ClaimError struct {
	Offsets []int64
	// HeldBy names, for the refused offsets another consumer's claim
	// stands on, that consumer.
	HeldBy map[int64]string
}

func (e *ClaimError) Error() string {
	msg := fmt.Sprintf("%v: offsets %v", ErrNotClaimed, e.Offsets)
	byHolder := map[string][]int64{}
	for _, o := range e.Offsets {
		if h, ok := e.HeldBy[o]; ok {
			byHolder[h] = append(byHolder[h], o)
		}
	}
	holders := slices.Sorted(maps.Keys(byHolder))
	for _, h := range holders {
		msg += fmt.Sprintf("; %v claimed by %s", byHolder[h], h)
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrNotClaimed) true.
func (e *ClaimError) Unwrap() error { return ErrNotClaimed }

// redriveError lists offsets a Redrive found no dead letter at.
type redriveError struct{ offsets []int64 }

func (e *redriveError) Error() string {
	return fmt.Sprintf("%v: offsets %v", ErrNotDead, e.offsets)
}

func (e *redriveError) Unwrap() error { return ErrNotDead }
