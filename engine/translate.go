package engine

import (
	"errors"

	"github.com/felixbroker/felix/engine/shardlog"
)

// translateLogErr turns the log's offset errors into the engine's.
func translateLogErr(err error) error {
	if err == nil {
		return nil // and allocate nothing: errors.As would
	}
	var oe *shardlog.OffsetError
	if errors.As(err, &oe) {
		kind := ErrOffsetBelowStart
		if errors.Is(err, shardlog.ErrPastEnd) {
			kind = ErrOffsetPastEnd
		}
		return &OffsetError{Offset: oe.Offset, Start: oe.Start, End: oe.End, Kind: kind}
	}
	return err
}
