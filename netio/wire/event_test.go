package wire

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestEventOffsetsKeepTheirGaps(t *testing.T) {
	var b EventBatch
	if err := b.Decode(mustFrame(t, AppendEventBatch(nil, 0, 9, 2, gEvents)), Limits{}); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for it := b.Events(); it.Next(); {
		got = append(got, it.Event().Offset)
	}
	if len(got) != 3 || got[0] != 1000 || got[1] != 1001 || got[2] != 1004 || b.LastOffset != 1004 {
		t.Fatalf("offsets %v, last %d", got, b.LastOffset)
	}
}

// eventBody is an EVENT_BATCH body with the given deltas and empty events.
func eventBody(base uint64, deltas ...uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, 1)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, base)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(deltas)))
	for _, d := range deltas {
		b = binary.AppendUvarint(b, d)
		b = append(b, make([]byte, 8+2+1+1)...)
	}
	return b
}

func TestEventOffsetsMustIncrease(t *testing.T) {
	for name, body := range map[string][]byte{
		"repeated":   eventBody(10, 0, 1, 1),
		"decreasing": eventBody(10, 0, 2, 1),
		"overflow":   eventBody(^uint64(0)-1, 0, 5),
	} {
		var b EventBatch
		if err := b.Decode(Frame{Type: TypeEventBatch, Body: body}, Limits{}); !errors.Is(err, CodeMalformedFrame) {
			t.Errorf("%s: %v", name, err)
		}
	}
	var b EventBatch
	if err := b.Decode(Frame{Type: TypeEventBatch, Body: eventBody(10, 3, 4, 9)}, Limits{}); err != nil || b.LastOffset != 19 {
		t.Fatalf("valid deltas: %v, last %d", err, b.LastOffset)
	}
}

func TestEventWriterPanicsOnOffsetsThatDoNotIncrease(t *testing.T) {
	for name, offsets := range map[string][]uint64{"below base": {9}, "repeated": {10, 10}, "decreasing": {10, 12, 11}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: accepted", name)
				}
			}()
			w := BeginEventBatch(nil, 0, 1, 0, 10)
			for _, o := range offsets {
				w.Add(Event{Offset: o})
			}
		}()
	}
}

func TestGroupRecordsMayBeEmptyAndOutOfOrder(t *testing.T) {
	var r GroupRecords
	if err := r.Decode(mustFrame(t, AppendGroupRecords(nil, 1, 4, nil)), Limits{}); err != nil || r.Count != 0 {
		t.Fatalf("empty poll answer: %v", err)
	}
	if err := r.Decode(mustFrame(t, AppendGroupRecords(nil, 1, 2, gGroupRecords)), Limits{}); err != nil {
		t.Fatal(err)
	}
	it := r.Records()
	it.Next()
	first := it.Record()
	it.Next()
	if first.Offset != 17 || it.Record().Offset != 12 || it.Record().DeliveryCount != 3 || it.Next() {
		t.Fatal("records out of order were reordered or lost")
	}
}
