package wire

import "strconv"

// Limits bound what a decoder accepts. Every bound is checked against the
// declared length or count before anything is sliced, walked or allocated.
// A zero field means its default; a field above what the wire format can
// express is clamped to it.
type Limits struct {
	// FrameBytesMax bounds a whole frame, header included. Default 4 MiB.
	FrameBytesMax int
	// BatchRecordsMax bounds the records of a publish, event or group
	// batch, and the offsets of a group ack/nack/extend. Default 10,000.
	BatchRecordsMax int
	// KeyBytesMax bounds a routing or cache key. Default 4 KiB, at most
	// 65,535 (the storage record's key length is a u16).
	KeyBytesMax int
	// NameBytesMax bounds tenant, namespace, stream, cache, group and
	// client names. Default and maximum 255 (a u8 length prefix).
	NameBytesMax int
	// TokenBytesMax bounds HELLO's auth token. Default 8 KiB, at most
	// 65,535 (a u16 length prefix).
	TokenBytesMax int
}

// Defaults.
const (
	DefaultFrameBytesMax   = 4 << 20
	DefaultBatchRecordsMax = 10_000
	DefaultKeyBytesMax     = 4 << 10
	DefaultNameBytesMax    = 255
	DefaultTokenBytesMax   = 8 << 10

	frameBytesCap = 1<<31 - 1
	keyBytesCap   = 1<<16 - 1
	nameBytesCap  = 255
	tokenBytesCap = 1<<16 - 1
	batchCap      = 1<<31 - 1
)

// Limit names one bound; it is what a LimitError and an ERROR frame's
// details.limit say.
type Limit string

// The limits.
const (
	LimitFrameBytes   Limit = "frame_bytes_max"
	LimitBatchRecords Limit = "batch_records_max"
	LimitKeyBytes     Limit = "key_bytes_max"
	LimitNameBytes    Limit = "name_bytes_max"
	LimitTokenBytes   Limit = "token_bytes_max"
)

// LimitError says which limit a frame broke. It unwraps to
// CodeFrameTooLarge for the frame size and to CodeLimitExceeded otherwise.
type LimitError struct {
	Limit Limit
	Max   int    // the bound in force
	Got   uint64 // what the frame declared
}

func (e *LimitError) Error() string {
	return "felix/wire: " + string(e.Limit) + " exceeded: " +
		strconv.FormatUint(e.Got, 10) + " > " + strconv.Itoa(e.Max)
}

// Unwrap returns the code, the per-code sentinel.
func (e *LimitError) Unwrap() error { return e.code() }

func (e *LimitError) code() Code {
	if e.Limit == LimitFrameBytes {
		return CodeFrameTooLarge
	}
	return CodeLimitExceeded
}

// Effective returns l with every zero field set to its default and every
// field clamped to what the wire can express: the limits actually in force.
func (l Limits) Effective() Limits {
	return Limits{
		FrameBytesMax:   bound(l.FrameBytesMax, DefaultFrameBytesMax, frameBytesCap),
		BatchRecordsMax: bound(l.BatchRecordsMax, DefaultBatchRecordsMax, batchCap),
		KeyBytesMax:     bound(l.KeyBytesMax, DefaultKeyBytesMax, keyBytesCap),
		NameBytesMax:    bound(l.NameBytesMax, DefaultNameBytesMax, nameBytesCap),
		TokenBytesMax:   bound(l.TokenBytesMax, DefaultTokenBytesMax, tokenBytesCap),
	}
}

func bound(v, def, ceiling int) int {
	if v <= 0 {
		return def
	}
	return min(v, ceiling)
}

func (l Limits) frameBytes() int { return bound(l.FrameBytesMax, DefaultFrameBytesMax, frameBytesCap) }
func (l Limits) batchRecords() int {
	return bound(l.BatchRecordsMax, DefaultBatchRecordsMax, batchCap)
}
func (l Limits) keyBytes() int   { return bound(l.KeyBytesMax, DefaultKeyBytesMax, keyBytesCap) }
func (l Limits) nameBytes() int  { return bound(l.NameBytesMax, DefaultNameBytesMax, nameBytesCap) }
func (l Limits) tokenBytes() int { return bound(l.TokenBytesMax, DefaultTokenBytesMax, tokenBytesCap) }

func check(limit Limit, got uint64, maxAllowed int) error {
	if got > uint64(maxAllowed) {
		return &LimitError{Limit: limit, Max: maxAllowed, Got: got}
	}
	return nil
}

// CheckFrameSize reports whether an encoded frame of n bytes fits.
func (l Limits) CheckFrameSize(n int) error {
	return check(LimitFrameBytes, uint64(n), l.frameBytes())
}

// CheckName reports whether a name fits. Encoders panic on a name longer
// than 255 bytes, so a caller holding names it did not choose checks first.
func (l Limits) CheckName(name []byte) error {
	return check(LimitNameBytes, uint64(len(name)), l.nameBytes())
}

// CheckKey reports whether a key fits.
func (l Limits) CheckKey(key []byte) error {
	return check(LimitKeyBytes, uint64(len(key)), l.keyBytes())
}

// CheckStreamRef reports whether the three names of ref fit.
func (l Limits) CheckStreamRef(ref StreamRef) error {
	return l.checkNames(ref.Tenant, ref.Namespace, ref.Stream)
}

// CheckCacheRef reports whether the three names of ref fit.
func (l Limits) CheckCacheRef(ref CacheRef) error {
	return l.checkNames(ref.Tenant, ref.Namespace, ref.Cache)
}

func (l Limits) checkNames(names ...[]byte) error {
	for _, n := range names {
		if err := l.CheckName(n); err != nil {
			return err
		}
	}
	return nil
}

// CheckRecords reports whether a publish batch fits the record count and
// key limits (the frame size is checked on the encoded bytes).
func (l Limits) CheckRecords(recs []Record) error {
	if err := check(LimitBatchRecords, uint64(len(recs)), l.batchRecords()); err != nil {
		return err
	}
	for i := range recs {
		if err := l.CheckKey(recs[i].Key); err != nil {
			return err
		}
	}
	return nil
}
