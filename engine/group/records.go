package group

import (
	"encoding/binary"
	"fmt"
	"time"
)

// recordVersion is the format version of both group logs' values. Frozen.
const recordVersion = 1

// The kinds of dead-letter log record. Frozen.
const (
	kindDead     = 1 // the group gave up on a record
	kindRedriven = 2 // an operator made it owed again
	kindDone     = 3 // a redriven record was finished (acked, or skipped by retention)
)

// Reason is why a record was dead-lettered. Frozen values.
type Reason uint8

// The reasons.
const (
	ReasonLapsed   Reason = 1 // delivered MaxDeliveries times; the last claim lapsed
	ReasonNacked   Reason = 2 // delivered MaxDeliveries times; the last delivery was nacked
	ReasonRejected Reason = 3 // a consumer rejected it (Detail says why)
)

func (r Reason) String() string {
	switch r {
	case ReasonLapsed:
		return "max deliveries reached: the last claim lapsed"
	case ReasonNacked:
		return "max deliveries reached: the last delivery was nacked"
	case ReasonRejected:
		return "rejected by a consumer"
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// cursorValueSize is the value of a cursor record: version, cursor.
const cursorValueSize = 9

func appendCursorValue(dst []byte, cursor int64) []byte {
	dst = append(dst, recordVersion)
	return binary.LittleEndian.AppendUint64(dst, uint64(cursor))
}

func decodeCursorValue(v []byte) (int64, error) {
	if len(v) != cursorValueSize || v[0] != recordVersion {
		return 0, fmt.Errorf("felix/group: cursor record of %d bytes, version %d", len(v), first(v))
	}
	return int64(binary.LittleEndian.Uint64(v[1:])), nil
}

// deadEvent is one record of the dead-letter log.
type deadEvent struct {
	kind   uint8
	offset int64 // the shard record's offset
	// kindDead only:
	deliveries uint32
	reason     Reason
	at         int64 // unix ns, wall clock, when it was given up on
	detail     string
}

// deadHeadSize is version, kind, offset; deadBodySize what kindDead adds
// before the detail: deliveries, reason, at, detail length.
const (
	deadHeadSize = 10
	deadBodySize = 15
)

func appendDeadValue(dst []byte, ev *deadEvent) []byte {
	dst = append(dst, recordVersion, ev.kind)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(ev.offset))
	if ev.kind != kindDead {
		return dst
	}
	dst = binary.LittleEndian.AppendUint32(dst, ev.deliveries)
	dst = append(dst, byte(ev.reason))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(ev.at))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(ev.detail)))
	return append(dst, ev.detail...)
}

// decodeDeadHead reads the kind and the offset, all compaction needs.
func decodeDeadHead(v []byte) (kind uint8, offset int64, err error) {
	if len(v) < deadHeadSize || v[0] != recordVersion || v[1] < kindDead || v[1] > kindDone {
		return 0, 0, fmt.Errorf("felix/group: dead-letter record of %d bytes, version %d", len(v), first(v))
	}
	return v[1], int64(binary.LittleEndian.Uint64(v[2:])), nil
}

func decodeDeadValue(v []byte) (deadEvent, error) {
	kind, offset, err := decodeDeadHead(v)
	if err != nil {
		return deadEvent{}, err
	}
	ev := deadEvent{kind: kind, offset: offset}
	if kind != kindDead {
		return ev, nil
	}
	b := v[deadHeadSize:]
	if len(b) < deadBodySize {
		return deadEvent{}, fmt.Errorf("felix/group: dead letter of %d bytes", len(v))
	}
	n := int(binary.LittleEndian.Uint16(b[13:]))
	if len(b) != deadBodySize+n {
		return deadEvent{}, fmt.Errorf("felix/group: dead letter of %d bytes, detail of %d", len(v), n)
	}
	ev.deliveries = binary.LittleEndian.Uint32(b)
	ev.reason = Reason(b[4])
	ev.at = int64(binary.LittleEndian.Uint64(b[5:]))
	ev.detail = string(b[deadBodySize:])
	return ev, nil
}

func first(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// DeadLetter is a record a group gave up on.
type DeadLetter struct {
	Offset     int64
	Deliveries uint32
	Reason     Reason
	Detail     string    // a rejecting consumer's words, with its name
	At         time.Time // when it was given up on
}
