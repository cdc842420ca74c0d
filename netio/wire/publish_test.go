package wire

import (
	"errors"
	"reflect"
	"testing"
)

func decodePublish(t *testing.T, frame []byte) (Publish, []Record) {
	t.Helper()
	var p Publish
	if err := p.Decode(mustFrame(t, frame), Limits{}); err != nil {
		t.Fatal(err)
	}
	return p, p.AppendRecords(nil)
}

func TestKeyedRecordsGoOutUnderTheKeyedFlag(t *testing.T) {
	frame := AppendPublishBatch(nil, 1, gRef, AckPerBatch, gRecords)
	f := mustFrame(t, frame)
	if f.Flags&FlagKeyed == 0 || RequiredFeatures(f.Type, f.Flags)&FeaturePublishKeyed == 0 {
		t.Fatalf("a keyed batch went out without FlagKeyed: %#x", f.Flags)
	}
	unkeyed := mustFrame(t, AppendPublishBatch(nil, 1, gRef, AckPerBatch, []Record{{Value: []byte("x")}}))
	if unkeyed.Flags != 0 {
		t.Fatalf("an unkeyed batch carries flags %#x", unkeyed.Flags)
	}
}

func TestTheJSONFallbackDecodesIntoTheSameRecords(t *testing.T) {
	seq := gSeq
	for _, c := range []struct{ binary, json []byte }{
		{AppendPublishBatch(nil, 1, gRef, AckPerBatch, gRecords), AppendPublishJSON(nil, 1, gRef, AckPerBatch, nil, gRecords)},
		{AppendPublishIdempotent(nil, 1, gRef, gSeq, gRecords), AppendPublishJSON(nil, 1, gRef, AckNone, &seq, gRecords)},
	} {
		pb, rb := decodePublish(t, c.binary)
		pj, rj := decodePublish(t, c.json)
		if !reflect.DeepEqual(rb, rj) || !reflect.DeepEqual(rb, gRecords) {
			t.Fatalf("records differ:\nbinary %+v\njson   %+v", rb, rj)
		}
		pb.records, pb.list, pb.json, pj.records, pj.list, pj.json = nil, nil, false, nil, nil, false
		if !reflect.DeepEqual(pb, pj) {
			t.Fatalf("headers differ:\nbinary %+v\njson   %+v", pb, pj)
		}
	}
}

func TestAReusedPublishForgetsThePreviousJSONBatch(t *testing.T) {
	var p Publish
	first := mustFrame(t, AppendPublishJSON(nil, 1, gRef, AckPerBatch, nil, gRecords))
	second := mustFrame(t, AppendPublishJSON(nil, 2, gRef, AckPerBatch, nil, []Record{{Value: []byte("v")}}))
	if p.Decode(first, Limits{}) != nil || p.Decode(second, Limits{}) != nil {
		t.Fatal("decode failed")
	}
	if got := p.AppendRecords(nil); len(got) != 1 || got[0].Key != nil || p.Keyed {
		t.Fatalf("stale key from the previous batch: %+v", got)
	}
}

func TestAnUnkeyedRecordInAKeyedBatchHasNoKey(t *testing.T) {
	_, recs := decodePublish(t, AppendPublishBatch(nil, 1, gRef, AckPerBatch, gRecords))
	if recs[2].Key != nil {
		t.Fatalf("key %q", recs[2].Key)
	}
}

func TestBatchWriterBuildsWhatAppendBuilds(t *testing.T) {
	w := BeginPublishBatch(make([]byte, 3, 64), 1, gRef, AckPerBatch, RecordFlags(gRecords...))
	for _, r := range gRecords {
		w.Add(r)
	}
	if w.Len() != 3 {
		t.Fatalf("Len %d", w.Len())
	}
	got := w.Finish()
	want := AppendPublishBatch(make([]byte, 3), 1, gRef, AckPerBatch, gRecords)
	if string(got) != string(want) || w.Size() != len(want)-3 {
		t.Fatalf("writer\n%x\nappend\n%x", got, want)
	}
}

func TestAnEmptyBatchAppendsNothing(t *testing.T) {
	dst := []byte("keep")
	if got := AppendPublishBatch(dst, 1, gRef, AckPerBatch, nil); string(got) != "keep" {
		t.Fatalf("%q", got)
	}
	if got := AppendPublishJSON(dst, 1, gRef, AckPerBatch, nil, nil); string(got) != "keep" {
		t.Fatalf("%q", got)
	}
	var p Publish
	if err := p.Decode(batchWithCount(0), Limits{}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("an empty batch decoded: %v", err)
	}
}

func TestAKeyInAnUnkeyedBatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a key was silently dropped")
		}
	}()
	w := BeginPublishBatch(nil, 1, gRef, AckNone, 0)
	w.Add(Record{Key: []byte("k")})
}

func TestPublishRefusesBadFields(t *testing.T) {
	good := AppendPublish(nil, 1, gRef, AckNone, Record{Value: []byte("v")})
	ackAt := HeaderSize + len(appendStreamRef(nil, gRef))
	badAck := append([]byte(nil), good...)
	badAck[ackAt] = 3
	trailing := append(append([]byte(nil), good...), 0)
	trailing[0]++
	nonMinimal := AppendFrame(nil, TypePublish, 0, 1, append(append(appendStreamRef(nil, gRef), 0), 0x80, 0x00))
	for name, frame := range map[string][]byte{"ack 3": badAck, "trailing byte": trailing, "non-minimal varint": nonMinimal} {
		var p Publish
		if err := p.Decode(mustFrame(t, frame), Limits{}); !errors.Is(err, CodeMalformedFrame) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPublishAckAddsUpItsRuns(t *testing.T) {
	var a PublishAck
	if err := a.Decode(mustFrame(t, AppendPublishAck(nil, 1, AckRun{0, 10, 2}, AckRun{3, 7, 5})), Limits{}); err != nil {
		t.Fatal(err)
	}
	if a.Len() != 2 || a.Records() != 7 || a.Run(1) != (AckRun{3, 7, 5}) {
		t.Fatalf("%d runs, %d records", a.Len(), a.Records())
	}
	zero := AppendFrame(nil, TypePublishAck, 0, 1, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	if err := a.Decode(mustFrame(t, zero), Limits{}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("a run of zero records: %v", err)
	}
}

func TestAppendPublishForFollowsTheFallbackRule(t *testing.T) {
	keyed, unkeyed := gRecords, []Record{{Value: []byte("a")}, {Value: []byte("b")}}
	seq := gSeq
	full := FeaturesAll
	for _, c := range []struct {
		session Features
		seq     *ProducerSeq
		recs    []Record
		want    Type
	}{
		{full, nil, keyed, TypePublishBatch},
		{full, nil, keyed[:1], TypePublish},
		{full &^ FeaturePublishKeyed, nil, keyed, TypePublishJSON},
		{full &^ FeaturePublishKeyed, nil, unkeyed, TypePublishBatch},
		{full &^ FeatureBinaryPublish, nil, unkeyed, TypePublishJSON},
		{full, &seq, keyed, TypePublishIdempotent},
		{full &^ FeaturePublishKeyed, &seq, keyed, TypePublishJSON},
		{full &^ FeatureBinaryPublish, &seq, unkeyed, TypePublishIdempotent},
	} {
		frame := AppendPublishFor(nil, c.session, 1, gRef, AckPerBatch, c.seq, c.recs)
		f := mustFrame(t, frame)
		if f.Type != c.want || RequiredFeatures(f.Type, f.Flags)&^c.session != 0 {
			t.Errorf("session %v, %d records, seq %v: %v", c.session, len(c.recs), c.seq != nil, f.Type)
			continue
		}
		p, recs := decodePublish(t, frame)
		if !reflect.DeepEqual(recs, c.recs) || p.Idempotent != (c.seq != nil) {
			t.Errorf("%v: records or producer lost", f.Type)
		}
	}
}
