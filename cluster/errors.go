package cluster

import "errors"

// Errors a caller can test with errors.Is.
var (
	// ErrInvalidEvent: Step was given an event it cannot apply (a missing
	// id, a bound exceeded, a spec that changed under the same name).
	ErrInvalidEvent = errors.New("felix/cluster: invalid event")
	// ErrTooFewBrokers: an object's replication factor exceeds the brokers
	// that are live, so its shards are not placed (never placed short).
	ErrTooFewBrokers = errors.New("felix/cluster: too few live brokers")
)
