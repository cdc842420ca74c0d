package replica

import (
	"errors"
	"slices"

	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// errRefused is a follower's answer that is not a REPLICATE_ACK (an
// ERROR: overloaded, or a broker that does not know the frame).
var errRefused = errors.New("felix/replica: the follower refused the batch")

// ReadCommitted reads log from `from` up to limit (the commit watermark
// a follower last learnt), as Log.Read does otherwise.
func ReadCommitted(log Log, from, limit int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	return readBelow(log, from, limit, maxBytes, dst)
}

// readBelow reads log from `from` as Log.Read does, but never a record at
// or past limit (the commit watermark): what lies between it and the log's
// end is not acknowledgeable yet.
func readBelow(log Log, from, limit int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	if from >= limit {
		if from > log.End() {
			return log.Read(from, maxBytes, dst) // the log's own offset error
		}
		return dst, from, nil
	}
	start := len(dst)
	out, next, err := log.Read(from, maxBytes, dst)
	if err != nil || next <= limit {
		return out, next, err
	}
	// Cut the records at limit and past it.
	it := segment.NewIter(out[start:])
	cut := 0
	for {
		rec, ok := it.Next()
		if !ok || rec.Offset >= limit {
			break
		}
		cut = it.Pos()
	}
	return out[:start+cut], limit, nil
}

// cloneRef copies a LogRef's names, which alias a frame.
func cloneRef(r wire.LogRef) wire.LogRef {
	r.Tenant, r.Namespace, r.Name, r.Part = slices.Clone(r.Tenant), slices.Clone(r.Namespace), slices.Clone(r.Name), slices.Clone(r.Part)
	return r
}
