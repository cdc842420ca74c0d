package wire

import (
	"encoding/binary"
	"testing"
)

func kib(n int) []byte {
	b := make([]byte, n<<10)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func batch100(keyed bool) []Record {
	recs := make([]Record, 100)
	for i := range recs {
		recs[i] = Record{Value: kib(1), Timestamp: gTS + int64(i)}
		if keyed {
			recs[i].Key = []byte("user-" + utoa(uint64(i)))
		}
	}
	return recs
}

func events100() []Event {
	evs := make([]Event, 100)
	for i := range evs {
		evs[i] = Event{Offset: 5000 + uint64(i), Timestamp: gTS, Key: []byte("user-" + utoa(uint64(i))), Value: kib(1)}
	}
	return evs
}

func assertNoAllocs(t *testing.T, name string, fn func()) {
	t.Helper()
	if n := testing.AllocsPerRun(50, fn); n != 0 {
		t.Errorf("%s: %.1f allocations per run", name, n)
	}
}

func TestHotFramesEncodeWithoutAllocating(t *testing.T) {
	buf := make([]byte, 0, 256<<10)
	recs, evs := batch100(true), events100()
	offsets := []uint64{1, 2, 3}
	encoders := map[string]func(){
		"PUBLISH":            func() { buf = AppendPublish(buf[:0], 1, gRef, AckPerBatch, recs[0]) },
		"PUBLISH_BATCH":      func() { buf = AppendPublishBatch(buf[:0], 1, gRef, AckPerBatch, recs) },
		"PUBLISH_IDEMPOTENT": func() { buf = AppendPublishIdempotent(buf[:0], 1, gRef, gSeq, recs) },
		"PUBLISH (For)":      func() { buf = AppendPublishFor(buf[:0], FeaturesAll, 1, gRef, AckPerBatch, nil, recs) },
		"PUBLISH_ACK":        func() { buf = AppendPublishAck(buf[:0], 1, AckRun{1, 2, 3}, AckRun{4, 5, 6}) },
		"EVENT_BATCH":        func() { buf = AppendEventBatch(buf[:0], 0, 1, 2, evs) },
		"CACHE_PUT": func() {
			buf = AppendCachePut(buf[:0], 1, CachePut{Cache: gCache, Key: []byte("k"), Value: recs[0].Value})
		},
		"CACHE_VALUE":       func() { buf = AppendCacheValue(buf[:0], 1, CacheValue{Found: true, Value: recs[0].Value}) },
		"CACHE_WATCH_EVENT": func() { buf = AppendCacheWatchEvent(buf[:0], 0, CacheWatchEvent{Kind: WatchPut, Key: []byte("k")}) },
		"COUNTER_ADD":       func() { buf = AppendCounterAdd(buf[:0], 1, CounterAdd{Cache: gCache, Key: []byte("k"), Delta: 1}) },
		"GROUP_RECORDS":     func() { buf = AppendGroupRecords(buf[:0], 1, 2, gGroupRecords) },
		"GROUP_ACK":         func() { buf = AppendGroupAck(buf[:0], 1, gGroup, offsets) },
		"PING":              func() { buf = AppendPing(buf[:0], 1, 2) },
		"FORWARD (in place)": func() {
			var w ForwardWriter
			buf, w = BeginForward(buf[:0], 1, forwardToken)
			buf = w.Finish(AppendPublishBatch(buf, 2, gRef, AckPerBatch, recs))
		},
	}
	for name, fn := range encoders {
		assertNoAllocs(t, name, fn)
	}
}

func TestBinaryFramesDecodeWithoutAllocating(t *testing.T) {
	for _, c := range goldenCases() {
		f := mustFrame(t, c.frame)
		if f.Type.JSON() || f.Type == TypeError {
			continue // control frames and ERROR decode into owned memory
		}
		assertNoAllocs(t, c.name, func() {
			var r Reader
			g, _, _ := r.Next(c.frame)
			decodeInPlace(g)
		})
	}
}

// decodeInPlace decodes any binary frame and walks its iterators, the way
// the server and the client will, without building a model.
func decodeInPlace(f Frame) error {
	var lim Limits
	switch f.Type {
	case TypePublish, TypePublishBatch, TypePublishIdempotent:
		var p Publish
		err := p.Decode(f, lim)
		for it := p.Records(); it.Next(); {
		}
		return err
	case TypeEventBatch:
		var b EventBatch
		err := b.Decode(f, lim)
		for it := b.Events(); it.Next(); {
		}
		return err
	case TypeGroupRecords:
		var r GroupRecords
		err := r.Decode(f, lim)
		for it := r.Records(); it.Next(); {
		}
		return err
	case TypePublishAck:
		var a PublishAck
		return a.Decode(f, lim)
	case TypeGroupAck, TypeGroupNack, TypeGroupExtend:
		var g GroupOffsets
		return g.Decode(f, lim)
	case TypeGroupResult:
		var g GroupResult
		return g.Decode(f, lim)
	case TypePing, TypePong:
		var p Ping
		return p.Decode(f, lim)
	case TypeForward:
		var m Forward
		if err := m.Decode(f, lim); err != nil {
			return err
		}
		return decodeInPlace(m.Inner)
	}
	return decodeSimpleInPlace(f, lim)
}

// decodeSimpleInPlace decodes into a stack value of the frame's type (an
// interface would move it to the heap and count against the codec).
func decodeSimpleInPlace(f Frame, lim Limits) error {
	switch f.Type {
	case TypeHello:
		var m Hello
		return m.Decode(f, lim)
	case TypeHelloOK:
		var m HelloOK
		return m.Decode(f, lim)
	case TypePeerHello:
		var m PeerHello
		return m.Decode(f, lim)
	case TypePeerHelloOK:
		var m PeerHelloOK
		return m.Decode(f, lim)
	case TypeOK:
		var m OK
		return m.Decode(f, lim)
	case TypePublishIdempotentAck:
		var m IdempotentAck
		return m.Decode(f, lim)
	case TypeCacheGet:
		var m CacheGet
		return m.Decode(f, lim)
	case TypeCachePut:
		var m CachePut
		return m.Decode(f, lim)
	case TypeCacheDelete:
		var m CacheDelete
		return m.Decode(f, lim)
	case TypeCacheValue:
		var m CacheValue
		return m.Decode(f, lim)
	case TypeCacheWritten:
		var m CacheWritten
		return m.Decode(f, lim)
	case TypeCacheWatchEvent:
		var m CacheWatchEvent
		return m.Decode(f, lim)
	case TypeCounterAdd:
		var m CounterAdd
		return m.Decode(f, lim)
	case TypeCounterGet:
		var m CounterGet
		return m.Decode(f, lim)
	case TypeCounterValue:
		var m CounterValue
		return m.Decode(f, lim)
	case TypeGroupPoll:
		var m GroupPoll
		return m.Decode(f, lim)
	}
	return decodeReplicationInPlace(f, lim)
}

// A heartbeat and a grant decode into lists their owner keeps and reuses.
var (
	reusedHeartbeat = Heartbeat{Reports: make([]HeartbeatReport, 0, 4)}
	reusedGrant     = LeaseGrant{Logs: make([]GrantedLog, 0, 4)}
)

// decodeReplicationInPlace is decodeSimpleInPlace for the replication
// frames; a heartbeat's and a grant's lists go into room the caller keeps.
func decodeReplicationInPlace(f Frame, lim Limits) error {
	switch f.Type {
	case TypeReplicate:
		var m Replicate
		return m.Decode(f, lim)
	case TypeReplicateAck:
		var m ReplicateAck
		return m.Decode(f, lim)
	case TypeFence:
		var m Fence
		return m.Decode(f, lim)
	case TypeFenceOK:
		var m FenceOK
		return m.Decode(f, lim)
	case TypeGenerationEnd:
		var m GenerationEnd
		return m.Decode(f, lim)
	case TypeGenerationEndOK:
		var m GenerationEndOK
		return m.Decode(f, lim)
	case TypeHeartbeat:
		return reusedHeartbeat.Decode(f, lim)
	case TypeLeaseGrant:
		return reusedGrant.Decode(f, lim)
	case TypeLogRead:
		var m LogRead
		return m.Decode(f, lim)
	}
	panic("decodeSimpleInPlace: no case for " + f.Type.String())
}

// TestHostileLengthsDoNotCostMemory declares ever larger counts and lengths
// in tiny frames: refusing them must cost the same, whatever they declare.
func TestHostileLengthsDoNotCostMemory(t *testing.T) {
	hostile := func(declared uint64) []Frame {
		count := binary.LittleEndian.AppendUint32(nil, uint32(min(declared, 1<<32-1)))
		varint := binary.AppendUvarint(nil, declared)
		ref := appendStreamRef(nil, gRef)
		return []Frame{
			{Type: TypePublishBatch, Body: append(append(append([]byte(nil), ref...), 2), count...)},
			{Type: TypeEventBatch, Body: append(make([]byte, 20), count...)},
			{Type: TypeGroupRecords, Body: append(make([]byte, 4), count...)},
			{Type: TypeGroupAck, Body: append(append(append([]byte(nil), ref...), 0, 0, 0, 0, 1, 'g'), count...)},
			{Type: TypeGroupResult, Body: append(make([]byte, 4), count...)},
			{Type: TypeCacheGet, Body: append(appendCacheRef(nil, gCache), varint...)},
			{Type: TypePublish, Body: append(append(append([]byte(nil), ref...), 0), varint...)},
			{Type: TypeCacheValue, Body: append(make([]byte, 17), varint...)},
		}
	}
	for i, small := range hostile(2) {
		large := hostile(1<<31 + 7)[i]
		a := testing.AllocsPerRun(20, func() { _ = decodeInPlace(small) })
		b := testing.AllocsPerRun(20, func() { _ = decodeInPlace(large) })
		if b > 1 || b > a+1 {
			t.Errorf("%v: %.0f allocations declaring 2, %.0f declaring 2^31", small.Type, a, b)
		}
		if err := decodeInPlace(large); err == nil {
			t.Errorf("%v: a declared 2^31 in a tiny frame decoded", small.Type)
		}
	}
	length := binary.LittleEndian.AppendUint32(nil, 1<<32-1)
	assertNoAllocs(t, "a short length", func() { _, _, _ = (&Reader{}).Next(length[:3]) })
}
