package wire

import (
	"errors"
	"testing"
)

func TestCachePutConditionsAndExpiriesRoundTrip(t *testing.T) {
	for _, cond := range []Condition{{}, {Kind: CondIfAbsent}, {Kind: CondIfOffset, Offset: 0}, {Kind: CondIfOffset, Offset: 9}} {
		for _, exp := range []Expiry{{}, {Kind: ExpireAfter, TTLMillis: 1}, {Kind: ExpireAt, At: gTS}} {
			in := CachePut{Cache: gCache, Key: []byte("k"), Condition: cond, Expiry: exp, Value: []byte("v")}
			var out CachePut
			if err := out.Decode(mustFrame(t, AppendCachePut(nil, 1, in)), Limits{}); err != nil {
				t.Fatal(err)
			}
			if out.Condition != cond || out.Expiry != exp {
				t.Fatalf("%+v %+v became %+v %+v", cond, exp, out.Condition, out.Expiry)
			}
		}
	}
}

// withOptions rewrites the options byte of an encoded CACHE_PUT or
// CACHE_DELETE (key "k").
func withOptions(frame []byte, opt byte) Frame {
	b := append([]byte(nil), frame...)
	b[HeaderSize+len(appendCacheRef(nil, gCache))+2] = opt
	return Frame{Type: Type(b[4]) | Type(b[5])<<8, Body: b[HeaderSize:]}
}

func TestContradictoryCacheOptionsAreMalformed(t *testing.T) {
	put := AppendCachePut(nil, 1, CachePut{Cache: gCache, Key: []byte("k")})
	for _, opt := range []byte{optIfAbsent | optIfOffset, optTTL | optExpiresAt, 0x10, 0x80} {
		var m CachePut
		if err := m.Decode(withOptions(put, opt), Limits{}); !errors.Is(err, CodeMalformedFrame) {
			t.Errorf("put options %#x: %v", opt, err)
		}
	}
	del := AppendCacheDelete(nil, 1, CacheDelete{Cache: gCache, Key: []byte("k")})
	for _, opt := range []byte{optIfAbsent, optTTL, optExpiresAt} {
		var m CacheDelete
		if err := m.Decode(withOptions(del, opt), Limits{}); !errors.Is(err, CodeMalformedFrame) {
			t.Errorf("delete options %#x: %v", opt, err)
		}
	}
}

func TestAMissOrADeleteCarriesNoValue(t *testing.T) {
	miss := AppendFrame(nil, TypeCacheValue, 0, 1, append(make([]byte, 17), 1, 'x'))
	var v CacheValue
	if err := v.Decode(mustFrame(t, miss), Limits{}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("a miss with a value: %v", err)
	}
	ev := AppendCacheWatchEvent(nil, 0, CacheWatchEvent{WatchID: 1, Offset: 2, Kind: WatchDelete, Key: []byte("k")})
	ev = append(ev[:len(ev)-1], 1, 'x')
	ev[0] += 1
	var w CacheWatchEvent
	if err := w.Decode(mustFrame(t, ev), Limits{}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("a delete with a value: %v", err)
	}
}

func TestCounterNeverWrittenIsNotZero(t *testing.T) {
	var v CounterValue
	if err := v.Decode(mustFrame(t, AppendCounterValue(nil, 1, CounterValue{})), Limits{}); err != nil || v.Exists {
		t.Fatalf("%+v %v", v, err)
	}
	if err := v.Decode(mustFrame(t, AppendCounterValue(nil, 1, CounterValue{Exists: true})), Limits{}); err != nil || !v.Exists || v.Sum != 0 {
		t.Fatalf("%+v %v", v, err)
	}
}
