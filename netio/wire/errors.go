package wire

// Code is the stable numeric code an ERROR frame carries. The client decides
// whether to retry from the code alone, never from the message.
//
// A Code is also an error: the per-code sentinel. Every error this package
// produces or decodes unwraps to its Code, so
//
//	errors.Is(err, wire.CodeNotLeader)
//
// holds for a decoded ERROR frame, an *Error built by the server, and a
// *LimitError from a decoder alike.
type Code uint16

// The codes, protocol version 1. Numbers and names are frozen; a new code
// takes a new number. The hundreds say the family: 1xx the connection and
// its frames, 2xx the request, 3xx who is asking, 4xx whether the broker can
// serve it now, 5xx its storage, 6xx one feature's rules, 9xx a bug.
const (
	CodeMalformedFrame       Code = 100
	CodeFrameTooLarge        Code = 101
	CodeUnknownFrameType     Code = 102
	CodeUnsupportedVersion   Code = 103
	CodeHandshakeRequired    Code = 104
	CodeHandshakeTimeout     Code = 105
	CodeIdleTimeout          Code = 106
	CodeFeatureNotNegotiated Code = 107
	CodeFrameTimeout         Code = 108

	CodeInvalidArgument      Code = 200
	CodeLimitExceeded        Code = 201
	CodeNotFound             Code = 202
	CodeAlreadyExists        Code = 203
	CodeOffsetBelowRetention Code = 204
	CodeOffsetPastTail       Code = 205
	CodePreconditionFailed   Code = 206

	CodeUnauthenticated Code = 300
	CodeForbidden       Code = 301
	CodeQuotaExceeded   Code = 302

	CodeNotLeader    Code = 400
	CodeNoQuorum     Code = 401
	CodeOverloaded   Code = 402
	CodeTimeout      Code = 403
	CodeShuttingDown Code = 404

	CodeStorageFull    Code = 500
	CodeStorageFailed  Code = 501
	CodeStorageCorrupt Code = 502

	CodeCacheWatchLagged Code = 600
	CodeSubscriberLagged Code = 601
	CodeProducerUnknown  Code = 610
	CodeSequenceGap      Code = 611
	CodeClaimNotHeld     Code = 620

	CodeInternal Code = 900
)

// codeInfo is the contract of one code.
type codeInfo struct {
	code Code
	name string
	// retry: the same request may succeed if sent again (after the backoff,
	// or at the broker the details name). Unknown codes are retried.
	retry bool
	// ambiguous: the request may have been applied although it failed, so
	// a resend may duplicate it.
	ambiguous bool
}

// codeList is THE list of error codes. docs/protocol.md mirrors it, and a
// test checks that the two agree.
var codeList = []codeInfo{
	{CodeMalformedFrame, "malformed_frame", false, false},              // the same bytes are malformed again; the connection is closed
	{CodeFrameTooLarge, "frame_too_large", false, false},               // details.limit, details.limit_value
	{CodeUnknownFrameType, "unknown_frame_type", false, false},         // a type this version does not define
	{CodeUnsupportedVersion, "unsupported_version", false, false},      // HELLO's version range misses the broker's
	{CodeHandshakeRequired, "handshake_required", false, false},        // a frame before HELLO
	{CodeHandshakeTimeout, "handshake_timeout", true, false},           // no HELLO in time; reconnect
	{CodeIdleTimeout, "idle_timeout", true, false},                     // the connection was idle too long; reconnect
	{CodeFeatureNotNegotiated, "feature_not_negotiated", false, false}, // details.feature
	{CodeFrameTimeout, "frame_timeout", true, false},                   // a frame did not arrive whole in time; reconnect
	{CodeInvalidArgument, "invalid_argument", false, false},            // details.field
	{CodeLimitExceeded, "limit_exceeded", false, false},                // details.limit, details.limit_value
	{CodeNotFound, "not_found", true, false},                           // retried on purpose: a just-promoted broker may not have opened the shard yet
	{CodeAlreadyExists, "already_exists", false, false},                //
	{CodeOffsetBelowRetention, "offset_below_retention", false, false}, // details.offset: the oldest offset still held
	{CodeOffsetPastTail, "offset_past_tail", true, false},              // details.offset: the next offset to be written
	{CodePreconditionFailed, "precondition_failed", false, false},      // details.offset: the key's current offset
	{CodeUnauthenticated, "unauthenticated", false, false},             // no valid token; a new one is needed, not a resend
	{CodeForbidden, "forbidden", false, false},                         // the credential lacks the permission
	{CodeQuotaExceeded, "quota_exceeded", true, false},                 // details.quota, details.retry_after_ms
	{CodeNotLeader, "not_leader", true, false},                         // redirect: details.leader_id, details.leader_addr, details.shard
	{CodeNoQuorum, "no_quorum", true, true},                            // this broker cannot vouch for the write; it may yet be held
	{CodeOverloaded, "overloaded", true, false},                        // refused before any work; details.retry_after_ms
	{CodeTimeout, "timeout", true, true},                               // gave up waiting; the request may still complete
	{CodeShuttingDown, "shutting_down", true, false},                   // refused before any work; try another broker
	{CodeStorageFull, "storage_full", true, false},                     // the disk is full: refused before any byte was written; retry with backoff, it succeeds once space is freed
	{CodeStorageFailed, "storage_failed", true, true},                  // a write or sync failed (out of space part way, too); the record may be on disk
	{CodeStorageCorrupt, "storage_corrupt", false, false},              // a record on disk is damaged: the shard is offline until repaired; the message names the file and byte
	{CodeCacheWatchLagged, "cache_watch_lagged", true, false},          // the watch ended; details.first_missed_offset to resume from
	{CodeSubscriberLagged, "subscriber_lagged", true, false},           // the subscription overflowed (Disconnect); details.first_missed_offset
	{CodeProducerUnknown, "producer_unknown", false, false},            // this leader knows no such producer: init a new one, report the batch
	{CodeSequenceGap, "sequence_gap", false, false},                    // details.expected_sequence
	{CodeClaimNotHeld, "claim_not_held", false, false},                 // details.offset: the claim lapsed or was never held
	{CodeInternal, "internal", true, true},                             // a bug; retried like an unclassified error
}

var codeIndex = func() map[Code]codeInfo {
	m := make(map[Code]codeInfo, len(codeList))
	for _, c := range codeList {
		if _, dup := m[c.code]; dup {
			panic("felix/wire: error code listed twice: " + c.name)
		}
		m[c.code] = c
	}
	return m
}()

// Codes lists every code of this protocol version in number order.
func Codes() []Code {
	out := make([]Code, len(codeList))
	for i, c := range codeList {
		out[i] = c.code
	}
	return out
}

// Known reports whether c is a code of this protocol version.
func (c Code) Known() bool { _, ok := codeIndex[c]; return ok }

// String is the stable name of c, such as "not_leader".
func (c Code) String() string {
	if info, ok := codeIndex[c]; ok {
		return info.name
	}
	return "code_" + utoa(uint64(c))
}

// Error makes c its own sentinel: "felix/wire: not_leader".
func (c Code) Error() string { return "felix/wire: " + c.String() }

// Retryable reports whether the same request may succeed if sent again.
// A code this version does not know is retryable: a wasted attempt is
// cheaper than a lost operation.
func (c Code) Retryable() bool {
	info, ok := codeIndex[c]
	return !ok || info.retry
}

// Ambiguous reports whether a request that failed with c may nevertheless
// have been applied, so that resending it may apply it twice. Unknown codes
// are ambiguous.
func (c Code) Ambiguous() bool {
	info, ok := codeIndex[c]
	return !ok || info.ambiguous
}

// CodeByName finds a code by its stable name.
func CodeByName(name string) (Code, bool) {
	for _, c := range codeList {
		if c.name == name {
			return c.code, true
		}
	}
	return 0, false
}

func utoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}
