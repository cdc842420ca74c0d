package wire

import (
	"fmt"
)

// Test-side models: every frame type decoded into one comparable value
// (iterators materialised into slices), and encoded back from it. Golden
// vectors compare against models; the fuzz targets re-encode them.

type publishModel struct {
	Type        Type
	Stream      StreamRef
	Ack         AckMode
	Keyed       bool
	Timestamped bool
	Idempotent  bool
	Producer    ProducerSeq
	Records     []Record
}

type eventBatchModel struct {
	SubscriptionID uint64
	Shard          uint32
	BaseOffset     uint64
	LastOffset     uint64
	Events         []Event
}

type groupRecordsModel struct {
	Shard   uint32
	Records []GroupRecord
}

type groupOffsetsModel struct {
	Op      Type
	Group   GroupRef
	Millis  uint32
	Offsets []uint64
}

type pingModel struct {
	Type    Type
	Payload uint64
}

// forwardModel is a FORWARD: its credential and its inner frame's bytes
// (the inner frame has its own model and vectors).
type forwardModel struct {
	Credential []byte
	Inner      []byte
}

type groupResultModel struct {
	Applied uint32
	NotHeld []uint64
}

// decodeModel decodes any frame of this protocol into its model.
func decodeModel(f Frame, lim Limits) (any, error) {
	switch f.Type {
	case TypePublish, TypePublishBatch, TypePublishIdempotent, TypePublishJSON:
		var p Publish
		if err := p.Decode(f, lim); err != nil {
			return nil, err
		}
		return publishModel{f.Type, p.Stream, p.Ack, p.Keyed, p.Timestamped, p.Idempotent,
			p.Producer, p.AppendRecords(nil)}, nil
	case TypePing, TypePong:
		var p Ping
		if err := p.Decode(f, lim); err != nil {
			return nil, err
		}
		return pingModel{f.Type, p.Payload}, nil
	case TypePublishAck:
		var a PublishAck
		if err := a.Decode(f, lim); err != nil {
			return nil, err
		}
		runs := make([]AckRun, a.Len())
		for i := range runs {
			runs[i] = a.Run(i)
		}
		return runs, nil
	case TypeEventBatch:
		return decodeEventModel(f, lim)
	case TypeForward:
		var m Forward
		if err := m.Decode(f, lim); err != nil {
			return nil, err
		}
		return forwardModel{m.Credential, AppendFrame(nil, m.Inner.Type, m.Inner.Flags, m.Inner.RequestID, m.Inner.Body)}, nil
	case TypeGroupRecords:
		return decodeGroupRecordsModel(f, lim)
	case TypeGroupAck, TypeGroupNack, TypeGroupExtend:
		var g GroupOffsets
		if err := g.Decode(f, lim); err != nil {
			return nil, err
		}
		return groupOffsetsModel{g.Op, g.Group, g.Millis, g.Offsets.AppendTo(nil)}, nil
	case TypeGroupResult:
		var g GroupResult
		if err := g.Decode(f, lim); err != nil {
			return nil, err
		}
		return groupResultModel{g.Applied, g.NotHeld.AppendTo(nil)}, nil
	}
	if f.Type.JSON() {
		m := NewControl(f.Type)
		if err := DecodeControl(f, lim, m); err != nil {
			return nil, err
		}
		return m, nil
	}
	return decodeSimpleModel(f, lim)
}

// simpleDecoder is every struct that decodes itself and is its own model.
type simpleDecoder interface {
	Decode(Frame, Limits) error
}

func newSimple(t Type) simpleDecoder {
	switch t {
	case TypeHello:
		return new(Hello)
	case TypeHelloOK:
		return new(HelloOK)
	case TypePeerHello:
		return new(PeerHello)
	case TypePeerHelloOK:
		return new(PeerHelloOK)
	case TypeOK:
		return new(OK)
	case TypeError:
		return new(Error)
	case TypePublishIdempotentAck:
		return new(IdempotentAck)
	case TypeCacheGet:
		return new(CacheGet)
	case TypeCachePut:
		return new(CachePut)
	case TypeCacheDelete:
		return new(CacheDelete)
	case TypeCacheValue:
		return new(CacheValue)
	case TypeCacheWritten:
		return new(CacheWritten)
	case TypeCacheWatchEvent:
		return new(CacheWatchEvent)
	case TypeCounterAdd:
		return new(CounterAdd)
	case TypeCounterGet:
		return new(CounterGet)
	case TypeCounterValue:
		return new(CounterValue)
	case TypeGroupPoll:
		return new(GroupPoll)
	case TypeReplicate:
		return new(Replicate)
	case TypeReplicateAck:
		return new(ReplicateAck)
	case TypeFence:
		return new(Fence)
	case TypeFenceOK:
		return new(FenceOK)
	case TypeGenerationEnd:
		return new(GenerationEnd)
	case TypeGenerationEndOK:
		return new(GenerationEndOK)
	case TypeHeartbeat:
		return new(Heartbeat)
	case TypeLeaseGrant:
		return new(LeaseGrant)
	case TypeLogRead:
		return new(LogRead)
	}
	return nil
}

func decodeSimpleModel(f Frame, lim Limits) (any, error) {
	d := newSimple(f.Type)
	if d == nil {
		return nil, fmt.Errorf("no model for %v", f.Type)
	}
	if err := d.Decode(f, lim); err != nil {
		return nil, err
	}
	return d, nil
}

func decodeEventModel(f Frame, lim Limits) (any, error) {
	var b EventBatch
	if err := b.Decode(f, lim); err != nil {
		return nil, err
	}
	m := eventBatchModel{b.SubscriptionID, b.Shard, b.BaseOffset, b.LastOffset, nil}
	for it := b.Events(); it.Next(); {
		m.Events = append(m.Events, it.Event())
	}
	return m, nil
}

func decodeGroupRecordsModel(f Frame, lim Limits) (any, error) {
	var r GroupRecords
	if err := r.Decode(f, lim); err != nil {
		return nil, err
	}
	m := groupRecordsModel{Shard: r.Shard}
	for it := r.Records(); it.Next(); {
		m.Records = append(m.Records, it.Record())
	}
	return m, nil
}

// encodeModel is the inverse of decodeModel.
func encodeModel(dst []byte, reqID uint64, model any) []byte {
	switch m := model.(type) {
	case publishModel:
		return encodePublishModel(dst, reqID, m)
	case pingModel:
		if m.Type == TypePong {
			return AppendPong(dst, reqID, m.Payload)
		}
		return AppendPing(dst, reqID, m.Payload)
	case []AckRun:
		return AppendPublishAck(dst, reqID, m...)
	case eventBatchModel:
		w := BeginEventBatch(dst, reqID, m.SubscriptionID, m.Shard, m.BaseOffset)
		for _, ev := range m.Events {
			w.Add(ev)
		}
		return w.Finish()
	case groupRecordsModel:
		return AppendGroupRecords(dst, reqID, m.Shard, m.Records)
	case groupOffsetsModel:
		return appendGroupOffsets(dst, m.Op, reqID, m.Group, m.Millis, m.Offsets)
	case groupResultModel:
		return AppendGroupResult(dst, reqID, m.Applied, m.NotHeld)
	case forwardModel:
		return AppendForward(dst, reqID, m.Credential, m.Inner)
	case Control:
		return AppendControl(dst, reqID, m)
	}
	return encodeSimpleModel(dst, reqID, model)
}

func encodePublishModel(dst []byte, reqID uint64, m publishModel) []byte {
	var flags Flags
	if m.Keyed {
		flags |= FlagKeyed
	}
	if m.Timestamped {
		flags |= FlagTimestamp
	}
	switch m.Type {
	case TypePublish:
		return AppendPublish(dst, reqID, m.Stream, m.Ack, m.Records[0])
	case TypePublishJSON:
		var seq *ProducerSeq
		if m.Idempotent {
			seq = &m.Producer
		}
		return AppendPublishJSON(dst, reqID, m.Stream, m.Ack, seq, m.Records)
	case TypePublishIdempotent:
		w := BeginPublishIdempotent(dst, reqID, m.Stream, m.Producer, flags)
		for _, r := range m.Records {
			w.Add(r)
		}
		return w.Finish()
	}
	w := BeginPublishBatch(dst, reqID, m.Stream, m.Ack, flags)
	for _, r := range m.Records {
		w.Add(r)
	}
	return w.Finish()
}

func encodeSimpleModel(dst []byte, reqID uint64, model any) []byte {
	switch m := model.(type) {
	case *Hello:
		return AppendHello(dst, reqID, *m)
	case *HelloOK:
		return AppendHelloOK(dst, reqID, *m)
	case *PeerHello:
		return AppendPeerHello(dst, reqID, *m)
	case *PeerHelloOK:
		return AppendPeerHelloOK(dst, reqID, *m)
	case *OK:
		return AppendOK(dst, reqID)
	case *Error:
		return AppendError(dst, reqID, m)
	case *IdempotentAck:
		return AppendPublishIdempotentAck(dst, reqID, *m)
	case *CacheGet:
		return AppendCacheGet(dst, reqID, *m)
	case *CachePut:
		return AppendCachePut(dst, reqID, *m)
	case *CacheDelete:
		return AppendCacheDelete(dst, reqID, *m)
	case *CacheValue:
		return AppendCacheValue(dst, reqID, *m)
	case *CacheWritten:
		return AppendCacheWritten(dst, reqID, *m)
	case *CacheWatchEvent:
		return AppendCacheWatchEvent(dst, reqID, *m)
	case *CounterAdd:
		return AppendCounterAdd(dst, reqID, *m)
	case *CounterGet:
		return AppendCounterGet(dst, reqID, *m)
	case *CounterValue:
		return AppendCounterValue(dst, reqID, *m)
	case *GroupPoll:
		return AppendGroupPoll(dst, reqID, *m)
	case *Replicate:
		return AppendReplicate(dst, reqID, *m)
	case *ReplicateAck:
		return AppendReplicateAck(dst, reqID, *m)
	case *Fence:
		return AppendFence(dst, reqID, *m)
	case *FenceOK:
		return AppendFenceOK(dst, reqID, *m)
	case *GenerationEnd:
		return AppendGenerationEnd(dst, reqID, *m)
	case *GenerationEndOK:
		return AppendGenerationEndOK(dst, reqID, *m)
	case *Heartbeat:
		return AppendHeartbeat(dst, reqID, *m)
	case *LeaseGrant:
		return AppendLeaseGrant(dst, reqID, *m)
	case *LogRead:
		return AppendLogRead(dst, reqID, *m)
	}
	panic(fmt.Sprintf("no encoder for model %T", model))
}
