package bench

import "errors"

// Errors a caller can test with errors.Is.
var (
	// ErrNoBaseline: a workload result has no baseline measured in the same
	// run. Felix never reports a figure without the raw limit beside it.
	ErrNoBaseline = errors.New("felix/bench: workload result without a baseline")
	// ErrNoLimit: a measurement was asked to run with neither a count nor a
	// duration, so it would never stop.
	ErrNoLimit = errors.New("felix/bench: neither a count nor a duration bounds the run")
	// ErrBadRate: an open-loop rate that is not a positive, finite number.
	ErrBadRate = errors.New("felix/bench: rate must be positive and finite")
	// ErrLanes: a recorder whose lanes do not match the workers using it.
	ErrLanes = errors.New("felix/bench: recorder lanes do not match the workers")
	// ErrInvalidResult: a result that cannot be reported (no workload name,
	// negative figures, a baseline without a name).
	ErrInvalidResult = errors.New("felix/bench: invalid result")
	// ErrHistogram: an encoded latency histogram that does not decode.
	ErrHistogram = errors.New("felix/bench: bad encoded histogram")
)
