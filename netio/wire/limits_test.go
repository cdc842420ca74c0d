package wire

import (
	"encoding/binary"
	"errors"
	"testing"
)

// wantLimit fails unless err is a *LimitError naming limit.
func wantLimit(t *testing.T, err error, limit Limit, maxAllowed int) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != limit || le.Max != maxAllowed {
		t.Fatalf("want %s (max %d), got %v", limit, maxAllowed, err)
	}
	if !errors.Is(err, CodeLimitExceeded) {
		t.Fatalf("%v does not unwrap to limit_exceeded", err)
	}
}

// batchWithCount is a PUBLISH_BATCH header declaring count records and
// holding none of them.
func batchWithCount(count uint32) Frame {
	body := appendStreamRef(nil, gRef)
	body = append(body, byte(AckPerBatch))
	body = binary.LittleEndian.AppendUint32(body, count)
	return Frame{Type: TypePublishBatch, Body: body}
}

func TestBatchCountIsCheckedBeforeTheRecordsAreWalked(t *testing.T) {
	var p Publish
	wantLimit(t, p.Decode(batchWithCount(DefaultBatchRecordsMax+1), Limits{}), LimitBatchRecords, DefaultBatchRecordsMax)
	wantLimit(t, p.Decode(batchWithCount(11), Limits{BatchRecordsMax: 10}), LimitBatchRecords, 10)
	if err := p.Decode(batchWithCount(10), Limits{BatchRecordsMax: 10}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("10 declared records in an empty body: %v", err)
	}
}

func TestKeyLengthIsCheckedBeforeTheKeyIsRead(t *testing.T) {
	body := appendCacheRef(nil, gCache)
	body = binary.AppendUvarint(body, DefaultKeyBytesMax+1) // and no key bytes at all
	var g CacheGet
	wantLimit(t, g.Decode(Frame{Type: TypeCacheGet, Body: body}, Limits{}), LimitKeyBytes, DefaultKeyBytesMax)

	frame := AppendPublish(nil, 1, gRef, AckNone, Record{Key: []byte("123456789"), Value: []byte("v")})
	f := mustFrame(t, frame)
	var p Publish
	wantLimit(t, p.Decode(f, Limits{KeyBytesMax: 8}), LimitKeyBytes, 8)
	if err := p.Decode(f, Limits{KeyBytesMax: 9}); err != nil {
		t.Fatal(err)
	}
}

func TestNameLengthIsConfigurable(t *testing.T) {
	f := mustFrame(t, AppendPublish(nil, 1, gRef, AckNone, Record{Value: []byte("v")}))
	var p Publish
	wantLimit(t, p.Decode(f, Limits{NameBytesMax: 5}), LimitNameBytes, 5) // "orders" is 6
	if err := p.Decode(f, Limits{NameBytesMax: 6}); err != nil {
		t.Fatal(err)
	}
}

func TestTokenLengthIsConfigurable(t *testing.T) {
	f := mustFrame(t, AppendHello(nil, 1, Hello{VersionMin: 1, VersionMax: 1, Token: []byte("0123456789")}))
	var h Hello
	wantLimit(t, h.Decode(f, Limits{TokenBytesMax: 9}), LimitTokenBytes, 9)
}

func TestPollSizeIsBoundedByTheBatchLimit(t *testing.T) {
	f := mustFrame(t, AppendGroupPoll(nil, 1, GroupPoll{Group: gGroup, MaxRecords: 101}))
	var g GroupPoll
	wantLimit(t, g.Decode(f, Limits{BatchRecordsMax: 100}), LimitBatchRecords, 100)
}

func TestGroupOffsetListsAreBoundedByTheBatchLimit(t *testing.T) {
	f := mustFrame(t, AppendGroupAck(nil, 1, gGroup, []uint64{1, 2, 3}))
	var g GroupOffsets
	wantLimit(t, g.Decode(f, Limits{BatchRecordsMax: 2}), LimitBatchRecords, 2)
}

func TestJSONPublishIsHeldToTheSameLimits(t *testing.T) {
	f := mustFrame(t, AppendPublishJSON(nil, 1, gRef, AckPerBatch, nil, gRecords))
	var p Publish
	wantLimit(t, p.Decode(f, Limits{BatchRecordsMax: 2}), LimitBatchRecords, 2)
	wantLimit(t, p.Decode(f, Limits{KeyBytesMax: 5}), LimitKeyBytes, 5)
	wantLimit(t, p.Decode(f, Limits{NameBytesMax: 5}), LimitNameBytes, 5)
}

func TestEffectiveLimitsDefaultAndClampToTheWire(t *testing.T) {
	got := Limits{KeyBytesMax: 1 << 20, NameBytesMax: 1000, TokenBytesMax: -1}.Effective()
	want := Limits{FrameBytesMax: DefaultFrameBytesMax, BatchRecordsMax: DefaultBatchRecordsMax,
		KeyBytesMax: 1<<16 - 1, NameBytesMax: 255, TokenBytesMax: DefaultTokenBytesMax}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestCheckHelpersAgreeWithTheDecoders(t *testing.T) {
	lim := Limits{BatchRecordsMax: 2, KeyBytesMax: 5, NameBytesMax: 5, FrameBytesMax: 100}
	wantLimit(t, lim.CheckRecords(gRecords), LimitBatchRecords, 2)
	wantLimit(t, lim.CheckRecords(gRecords[:2]), LimitKeyBytes, 5)
	wantLimit(t, lim.CheckStreamRef(gRef), LimitNameBytes, 5)
	wantLimit(t, lim.CheckCacheRef(gCache), LimitNameBytes, 5)
	if err := lim.CheckFrameSize(101); !errors.Is(err, CodeFrameTooLarge) {
		t.Fatalf("CheckFrameSize: %v", err)
	}
	if err := (Limits{}).CheckRecords(gRecords); err != nil {
		t.Fatal(err)
	}
}

func TestEncodersPanicOnANameTheWireCannotCarry(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a 256-byte name was encoded")
		}
	}()
	AppendPublish(nil, 1, StreamRef{Stream: make([]byte, 256)}, AckNone, Record{})
}
