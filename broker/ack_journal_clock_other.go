//go:build !(linux || darwin)

package broker

import (
	"errors"
	"time"
)

// monoClock: no CLOCK_MONOTONIC reading here; an ack journal is refused.
type monoClock struct{}

func newMonoClock() (monoClock, error) {
	return monoClock{}, errors.New("needs CLOCK_MONOTONIC: linux or darwin only")
}

func (monoClock) of(time.Time) int64 { return 0 }
