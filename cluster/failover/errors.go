package failover

import (
	"fmt"

	"github.com/felixbroker/felix/cluster"
)

// ErrInvalidEvent: Step was given an event no state could make valid (a
// missing id, a bound exceeded, an answer to a write never sent). It wraps
// cluster.ErrInvalidEvent, so errors.Is matches either.
var ErrInvalidEvent = fmt.Errorf("felix/cluster/failover: %w", cluster.ErrInvalidEvent)
