package client

import "github.com/felixbroker/felix/netio/wire"

// Code is a protocol error code (docs/protocol.md, "Errors"): the stable
// number a refusal carries. A caller tests for one with its sentinel
// (errors.Is(err, ErrForbidden)); SentinelFor maps a Code to it.
type Code uint16

// String is the code's stable name, such as "not_leader".
func (c Code) String() string { return wire.Code(c).String() }

// Retryable reports whether the same request may succeed if sent again. A
// code this version does not know is retryable.
func (c Code) Retryable() bool { return wire.Code(c).Retryable() }

// Ambiguous reports whether a request refused with c may nevertheless have
// been applied. A code this version does not know is ambiguous.
func (c Code) Ambiguous() bool { return wire.Code(c).Ambiguous() }

// The codes the client itself tests for or refuses with.
const (
	codeInvalidArgument    = Code(wire.CodeInvalidArgument)
	codeNotLeader          = Code(wire.CodeNotLeader)
	codePreconditionFailed = Code(wire.CodePreconditionFailed)
)

// Details are the structured facts some refusals carry (docs/protocol.md,
// "Errors"); each field is set only by the codes named beside it.
type Details struct {
	LeaderID          string   // not_leader
	LeaderAddr        string   // not_leader: where to send it instead
	Shard             *int     // not_leader and others naming a shard
	ExpectedSequence  *uint64  // sequence_gap
	FirstMissedOffset *int64   // cache_watch_lagged, subscriber_lagged
	Offset            *int64   // precondition_failed, offset_below_retention, offset_past_tail, claim_not_held
	Quota             string   // quota_exceeded: which quota
	Limit             string   // limit_exceeded, frame_too_large: which limit, such as "key_bytes_max"
	LimitValue        uint64   // the limit's value
	Feature           Features // feature_not_negotiated: the missing bits
	Field             string   // invalid_argument: which field
	RetryAfterMillis  uint32   // overloaded, quota_exceeded
}

func detailsFrom(d wire.Details) Details {
	out := Details{LeaderID: d.LeaderID, LeaderAddr: d.LeaderAddr, ExpectedSequence: d.ExpectedSequence,
		FirstMissedOffset: offsetPtr(d.FirstMissedOffset), Offset: offsetPtr(d.Offset),
		Quota: d.Quota, Limit: string(d.Limit), LimitValue: d.LimitValue, Feature: Features(d.Feature),
		Field: d.Field, RetryAfterMillis: d.RetryAfterMillis}
	if d.Shard != nil {
		s := int(*d.Shard)
		out.Shard = &s
	}
	return out
}

// offsetPtr converts an optional wire offset to the client's offset type.
func offsetPtr(p *uint64) *int64 {
	if p == nil {
		return nil
	}
	o := int64(*p)
	return &o
}
