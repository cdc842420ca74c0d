package cache

import (
	"encoding/binary"
	"fmt"

	"github.com/felixbroker/felix/segment"
)

// A cache record in the shard's log (segment format, frozen):
//
//	put:          key | value                       flags 0
//	put with TTL: key | expiry (i64, unix ns) | value   flags FlagExpiry
//	delete:       key | (nothing)                   flags FlagTombstone
//
// The expiry is absolute, so it means the same after a restart however
// long the broker was down.
const expiryBytes = 8

// frameValue returns the record value and flags of a put: value itself, or
// the expiry and value in scratch.
func frameValue(scratch, value []byte, expiresAt int64) ([]byte, []byte, uint16) {
	if expiresAt == 0 {
		return scratch, value, 0
	}
	scratch = binary.LittleEndian.AppendUint64(scratch[:0], uint64(expiresAt))
	scratch = append(scratch, value...)
	return scratch, scratch, segment.FlagExpiry
}

// valueOf splits a put record's value into the user's value and its
// expiry (0: none).
func valueOf(r *segment.Record) (value []byte, expiresAt int64, err error) {
	if r.Flags&segment.FlagExpiry == 0 {
		return r.Value, 0, nil
	}
	if len(r.Value) < expiryBytes {
		return nil, 0, fmt.Errorf("felix/cache: record %d has the expiry flag and %d value bytes", r.Offset, len(r.Value))
	}
	return r.Value[expiryBytes:], int64(binary.LittleEndian.Uint64(r.Value)), nil
}

// isDelete reports a tombstone.
func isDelete(r *segment.Record) bool { return r.Flags&segment.FlagTombstone != 0 }

// isControl reports a record that is no cache write.
func isControl(r *segment.Record) bool { return r.Flags&segment.FlagControl != 0 }

// expired reports whether a value expiring at expiresAt (0: never) has
// expired at now: a value lives while now < expiresAt.
func expired(expiresAt, now int64) bool { return expiresAt != 0 && now >= expiresAt }
