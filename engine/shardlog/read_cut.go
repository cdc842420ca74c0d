package shardlog

import (
	"errors"

	"github.com/felixbroker/felix/segment"
)

// cutHeader reports a region that ends inside a record header: fewer bytes
// than a header, which the decoder calls ErrZero when they happen to be
// zero. Reads stop at the visible end, so inside a region that is only
// ever the start of a record the read window cut, never the end of the
// data.
func cutHeader(rest []byte, err error) bool {
	return len(rest) < segment.RecordHeaderSize && errors.Is(err, segment.ErrZero)
}
