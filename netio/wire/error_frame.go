package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// Error is a protocol error: the body of an ERROR frame, or the error a
// broker means to send as one. It unwraps to its Code, so errors.Is(err,
// wire.CodeNotLeader) works on it.
type Error struct {
	Code Code
	// Name is the code's stable name as received. Empty means Code.String(),
	// which is what is sent; it matters only for a code this version does
	// not know.
	Name    string
	Message string
	Details Details
}

// Details are the structured facts some codes carry. Each field is set only
// by the codes the error table names for it.
type Details struct {
	LeaderID          string   `json:"leader_id,omitempty"`           // not_leader
	LeaderAddr        string   `json:"leader_addr,omitempty"`         // not_leader: where to send it instead
	Shard             *uint32  `json:"shard,omitempty"`               // not_leader and others naming a shard
	ExpectedSequence  *uint64  `json:"expected_sequence,omitempty"`   // sequence_gap
	FirstMissedOffset *uint64  `json:"first_missed_offset,omitempty"` // cache_watch_lagged, subscriber_lagged
	Offset            *uint64  `json:"offset,omitempty"`              // precondition_failed, offset_below_retention, offset_past_tail, claim_not_held
	Quota             string   `json:"quota,omitempty"`               // quota_exceeded: which quota
	Limit             Limit    `json:"limit,omitempty"`               // limit_exceeded, frame_too_large: which limit
	LimitValue        uint64   `json:"limit_value,omitempty"`         // the limit's value
	Feature           Features `json:"feature,omitempty"`             // feature_not_negotiated: the missing bits
	Field             string   `json:"field,omitempty"`               // invalid_argument: which field
	RetryAfterMillis  uint32   `json:"retry_after_ms,omitempty"`      // overloaded, quota_exceeded
}

// U32 and U64 return a pointer to v, for the optional Details fields.
func U32(v uint32) *uint32 { return &v }

// U64 returns a pointer to v, for the optional Details fields.
func U64(v uint64) *uint64 { return &v }

func (e *Error) Error() string {
	if e.Message == "" {
		return "felix/wire: " + e.name()
	}
	return "felix/wire: " + e.name() + ": " + e.Message
}

// Unwrap returns the code, the per-code sentinel.
func (e *Error) Unwrap() error { return e.Code }

func (e *Error) name() string {
	if e.Name != "" && !e.Code.Known() {
		return e.Name
	}
	return e.Code.String()
}

// CodeOf is the code err carries, or CodeInternal when err carries none
// (and 0 for nil).
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	var c Code
	if errors.As(err, &c) {
		return c
	}
	return CodeInternal
}

// Retryable reports whether an operation that failed with err may succeed
// if tried again. An error with no code (a broken connection, a local
// timeout) is retryable.
func Retryable(err error) bool {
	var c Code
	if errors.As(err, &c) {
		return c.Retryable()
	}
	return err != nil
}

// ErrorFrom turns any error into the *Error a broker sends: an *Error as is,
// a *LimitError with the limit in its details, a bare Code with no message,
// anything else as internal with its text. The result may be a value the
// package shares (the reasons a frame is malformed): read it, do not modify it.
func ErrorFrom(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var le *LimitError
	if errors.As(err, &le) {
		return &Error{Code: le.code(), Message: le.Error(),
			Details: Details{Limit: le.Limit, LimitValue: uint64(le.Max)}}
	}
	var c Code
	if errors.As(err, &c) {
		if err == error(c) {
			return &Error{Code: c}
		}
		return &Error{Code: c, Message: err.Error()} // the code wrapped with what happened
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// ERROR body:
//
//	u16 code | u8 name len | name | u16 message len | message |
//	u32 details len | details (a JSON object, or nothing)
const errorMessageBytesMax = 1<<16 - 1

// AppendError appends an ERROR frame. A message longer than 65,535 bytes is
// cut at a character boundary.
func AppendError(dst []byte, requestID uint64, e *Error) []byte {
	dst, start := beginFrame(dst, TypeError, 0, requestID)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(e.Code))
	dst = appendName(dst, []byte(e.name()))
	msg := truncateUTF8(e.Message, errorMessageBytesMax)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(msg)))
	dst = append(dst, msg...)
	dst = appendDetails(dst, &e.Details)
	return endFrame(dst, start)
}

func appendDetails(dst []byte, d *Details) []byte {
	if *d == (Details{}) {
		return binary.LittleEndian.AppendUint32(dst, 0)
	}
	js, err := json.Marshal(d)
	if err != nil {
		panic("felix/wire: error details did not marshal: " + err.Error())
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(js)))
	return append(dst, js...)
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Decode reads an ERROR frame into e. The strings are copies: e does not
// alias the frame.
func (e *Error) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeError); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	code := Code(c.u16())
	name := c.name(nameBytesCap)
	msg := c.take(int(c.u16()))
	details := c.take(int(c.u32()))
	if err := c.finish(); err != nil {
		return err
	}
	*e = Error{Code: code, Name: string(name), Message: string(msg)}
	if len(details) == 0 {
		return nil
	}
	if err := json.Unmarshal(details, &e.Details); err != nil {
		return errMalformedJSON
	}
	return nil
}
