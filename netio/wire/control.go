package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
)

// Control is the body of a JSON control frame: each type here names its
// frame type and knows its own bounds. Control frames are off the hot path;
// decoding them allocates. Unknown JSON fields are ignored, so a later
// version may add fields; a body that is not a JSON object is malformed.
type Control interface {
	FrameType() Type
	// check applies the name, key and count limits after decoding (the
	// frame size already bounded what decoding could allocate).
	check(lim Limits) error
}

// AppendControl appends m as a frame of its type.
func AppendControl(dst []byte, requestID uint64, m Control) []byte {
	return appendJSONFrame(dst, m.FrameType(), requestID, m)
}

// DecodeControl reads f into m, which must be a pointer to the Control type
// of f's type (NewControl gives one). m is zeroed first.
func DecodeControl(f Frame, lim Limits, m Control) error {
	if err := expectType(f, m.FrameType()); err != nil {
		return err
	}
	body := bytes.TrimLeft(f.Body, " \t\r\n")
	if len(body) == 0 || body[0] != '{' {
		return errMalformedJSON
	}
	reflect.ValueOf(m).Elem().SetZero()
	if err := json.Unmarshal(body, m); err != nil {
		return errMalformedJSON
	}
	return m.check(lim)
}

// NewControl returns a new zero value of the Control type for t, or nil if
// t is not a JSON control frame (PUBLISH_JSON decodes into Publish).
func NewControl(t Type) Control {
	if mk, ok := controlTypes[t]; ok {
		return mk()
	}
	return nil
}

var controlTypes = map[Type]func() Control{
	TypeBrokerList:             func() Control { return new(BrokerList) },
	TypeBrokerListResult:       func() Control { return new(BrokerListResult) },
	TypeProducerInit:           func() Control { return new(ProducerInit) },
	TypeProducerInitOK:         func() Control { return new(ProducerInitOK) },
	TypeSubscribe:              func() Control { return new(Subscribe) },
	TypeSubscribed:             func() Control { return new(Subscribed) },
	TypeUnsubscribe:            func() Control { return new(Unsubscribe) },
	TypeSubscriptionEnded:      func() Control { return new(SubscriptionEnded) },
	TypeSubscriptionAtEnd:      func() Control { return new(SubscriptionAtEnd) },
	TypeStreamCreate:           func() Control { return new(StreamCreate) },
	TypeStreamDelete:           func() Control { return new(StreamDelete) },
	TypeStreamDescribe:         func() Control { return new(StreamDescribe) },
	TypeStreamInfo:             func() Control { return new(StreamInfo) },
	TypeStreamList:             func() Control { return new(StreamList) },
	TypeStreamListResult:       func() Control { return new(StreamListResult) },
	TypeCacheCreate:            func() Control { return new(CacheCreate) },
	TypeCacheDrop:              func() Control { return new(CacheDrop) },
	TypeCacheWatch:             func() Control { return new(CacheWatch) },
	TypeWatchStarted:           func() Control { return new(WatchStarted) },
	TypeWatchEnded:             func() Control { return new(WatchEnded) },
	TypeCacheUnwatch:           func() Control { return new(CacheUnwatch) },
	TypeCacheDescribe:          func() Control { return new(CacheDescribe) },
	TypeCacheInfo:              func() Control { return new(CacheInfo) },
	TypeGroupDescribe:          func() Control { return new(GroupDescribe) },
	TypeGroupInfo:              func() Control { return new(GroupInfo) },
	TypeGroupList:              func() Control { return new(GroupList) },
	TypeGroupListResult:        func() Control { return new(GroupListResult) },
	TypeGroupDeadLetters:       func() Control { return new(GroupDeadLetters) },
	TypeGroupDeadLettersResult: func() Control { return new(GroupDeadLettersResult) },
	TypeGroupRedrive:           func() Control { return new(GroupRedrive) },
	TypeGroupRedriveResult:     func() Control { return new(GroupRedriveResult) },
}

// invalid is the invalid_argument error naming field.
func invalid(field, msg string) *Error {
	return &Error{Code: CodeInvalidArgument, Message: field + ": " + msg, Details: Details{Field: field}}
}

// checkEnum accepts "" (the broker's default) or one of allowed.
func checkEnum[S ~string](field string, v S, allowed ...S) error {
	if v == "" || slices.Contains(allowed, v) {
		return nil
	}
	return invalid(field, "unknown value "+string(v))
}

func (l Limits) checkNameString(s string) error {
	return check(LimitNameBytes, uint64(len(s)), l.nameBytes())
}

func (l Limits) checkCount(n int) error {
	return check(LimitBatchRecords, uint64(n), l.batchRecords())
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
