package producer

import (
	"errors"
	"fmt"
)

// Errors a caller can test with errors.Is. The network layer maps each to
// a stable wire code.
var (
	// ErrProducerUnknown: this broker does not know the producer: it
	// restarted, the producer idled past its expiry, the shard has a new
	// leader, or an earlier batch of the producer failed here. A batch in
	// flight when it was answered has an unknown outcome: it may or may
	// not have landed. Register again.
	ErrProducerUnknown = errors.New("felix/producer: producer unknown to this broker: in-flight batches have an unknown outcome; register again")
	// ErrSequenceGap matches a *SequenceError: the batch skips sequences.
	ErrSequenceGap = errors.New("felix/producer: sequence gap")
	// ErrSequenceStale is a sequence older than the batches the broker
	// remembers: it landed, and its offsets are no longer known.
	ErrSequenceStale = errors.New("felix/producer: sequence older than the remembered window")
	// ErrTooManyInFlight is a new batch while InFlightMax batches of the
	// producer on that shard are still unacknowledged.
	ErrTooManyInFlight = errors.New("felix/producer: too many unacknowledged batches on this shard")
	// ErrTooManyProducers refuses a registration while ProducersMax
	// producers are live.
	ErrTooManyProducers = errors.New("felix/producer: too many producers")
)

// SequenceError refuses a batch whose sequence is not the one expected:
// send Expected next (after re-sending whatever was not acknowledged).
type SequenceError struct {
	Got, Expected uint64
}

func (e *SequenceError) Error() string {
	return fmt.Sprintf("%v: got batch %d, expected %d", ErrSequenceGap, e.Got, e.Expected)
}

// Unwrap makes errors.Is(err, ErrSequenceGap) true.
func (e *SequenceError) Unwrap() error { return ErrSequenceGap }
