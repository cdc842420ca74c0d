package peer

import "time"

// backoff is how long a link waits after its attempt-th failed dial in a
// row before it dials again: full jitter (AWS's "Exponential Backoff and
// Jitter"), a uniformly random wait in [0, min(max, base·2^(attempt-1))],
// so brokers that lost a peer together do not redial it together. u is a
// uniform random number in [0, 1).
func backoff(attempt int, base, ceiling time.Duration, u float64) time.Duration {
	if attempt <= 0 {
		return 0
	}
	window := ceiling
	if shift := attempt - 1; shift < 62 && base <= ceiling>>shift {
		window = base << shift
	}
	return time.Duration(u * float64(window))
}
