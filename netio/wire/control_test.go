package wire

import (
	"errors"
	"testing"
)

func decodeControlText(t *testing.T, typ Type, body string) (Control, error) {
	t.Helper()
	m := NewControl(typ)
	return m, DecodeControl(Frame{Type: typ, Body: []byte(body)}, Limits{}, m)
}

func TestControlBodiesMustBeJSONObjects(t *testing.T) {
	for _, body := range []string{"", "null", "[]", `"x"`, "{", `{"shard": "two"}`, `{} {}`} {
		if _, err := decodeControlText(t, TypeGroupList, body); !errors.Is(err, CodeMalformedFrame) {
			t.Errorf("%q: %v", body, err)
		}
	}
}

func TestControlIgnoresFieldsFromLaterVersions(t *testing.T) {
	m, err := decodeControlText(t, TypeSubscribed, `{"subscription_id": 3, "first_offset": 7, "added_in_v2": true}`)
	if err != nil || *m.(*Subscribed) != (Subscribed{SubscriptionID: 3, FirstOffset: 7}) {
		t.Fatalf("%+v %v", m, err)
	}
}

func TestControlEnumsAreChecked(t *testing.T) {
	for typ, body := range map[Type]string{
		TypeStreamCreate: `{"stream": {"stream": "s"}, "config": {"consistency": "Majority"}}`,
		TypeSubscribe:    `{"stream": {"stream": "s"}, "start": {"from": "middle"}}`,
		TypeCacheCreate:  `{"cache": {"cache": "c"}, "config": {"fsync": {"mode": "Sometimes"}}}`,
	} {
		_, err := decodeControlText(t, typ, body)
		var e *Error
		if !errors.Is(err, CodeInvalidArgument) || !errors.As(err, &e) || e.Details.Field == "" {
			t.Errorf("%v: %v", typ, err)
		}
	}
	if _, err := decodeControlText(t, TypeSubscribe, `{"stream": {"stream": "s"}, "start": {"from": "latest", "offset": 5}}`); !errors.Is(err, CodeInvalidArgument) {
		t.Errorf("an offset with from=latest: %v", err)
	}
	if _, err := decodeControlText(t, TypeStreamCreate, `{"stream": {"stream": "s"}, "config": {}}`); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}

func TestControlDecodeStartsFromZero(t *testing.T) {
	m := &Subscribe{Shard: 9, QueueCapacity: 5}
	if err := DecodeControl(Frame{Type: TypeSubscribe, Body: []byte(`{"stream": {"stream": "s"}}`)}, Limits{}, m); err != nil {
		t.Fatal(err)
	}
	if m.Shard != 0 || m.QueueCapacity != 0 {
		t.Fatalf("stale fields: %+v", m)
	}
}

func TestControlFrameOfAnotherTypeIsRefused(t *testing.T) {
	if err := DecodeControl(Frame{Type: TypeSubscribed, Body: []byte(`{}`)}, Limits{}, new(Subscribe)); !errors.Is(err, CodeMalformedFrame) {
		t.Fatal(err)
	}
	if NewControl(TypePublishBatch) != nil || NewControl(TypePublishJSON) != nil {
		t.Fatal("binary frames have no Control type")
	}
}

func TestARetainedWatchNeedsItsOwnFeature(t *testing.T) {
	plain, retained := CacheWatch{}, CacheWatch{Retained: true}
	if plain.RequiredFeatures().Has(FeatureCacheWatchRetained) ||
		!retained.RequiredFeatures().Has(FeatureCache|FeatureCacheWatch|FeatureCacheWatchRetained) {
		t.Fatal("retained watch features")
	}
}

// A SUBSCRIBE from a time or until its end needs FeatureSubscribeBounds:
// an older broker would refuse the one and ignore the other, and its
// subscriber would wait for an end that never comes.
func TestABoundedSubscribeNeedsItsOwnFeature(t *testing.T) {
	plain := Subscribe{Start: Start{From: StartOffset, Offset: 3}}
	byTime := Subscribe{Start: Start{From: StartTime, Time: 1}}
	untilEnd := Subscribe{UntilEnd: true}
	if plain.RequiredFeatures().Has(FeatureSubscribeBounds) ||
		!byTime.RequiredFeatures().Has(FeatureSubscribeBounds) || !untilEnd.RequiredFeatures().Has(FeatureSubscribeBounds) {
		t.Fatal("bounded subscribe features")
	}
	if !RequiredFeatures(TypeSubscriptionAtEnd, 0).Has(FeatureSubscribeBounds) {
		t.Fatal("SUBSCRIPTION_AT_END is sent only on a session with FeatureSubscribeBounds")
	}
	for body, field := range map[string]string{
		`{"stream": {"stream": "s"}, "start": {"from": "latest", "time": 5}}`:            "start.time",
		`{"stream": {"stream": "s"}, "until_offset": 9}`:                                 "until_offset",
		`{"stream": {"stream": "s"}, "start": {"from": "time", "time": 5, "offset": 1}}`: "start.offset",
	} {
		_, err := decodeControlText(t, TypeSubscribe, body)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Details.Field != field {
			t.Errorf("%s: %v, want invalid_argument naming %s", body, err, field)
		}
	}
}
