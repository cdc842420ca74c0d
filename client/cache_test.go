package client

import (
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// cacheHandler answers the cache frames the way a broker holding one key
// "k" (offset 7, expiring at 9e18) and one counter "n" (sum 5) would, and
// refuses conditional writes: if absent over "k", if offset at anything
// but 7, and anything of key "gone" as a key with no value.
func cacheHandler(t *testing.T) func(fc *fakeConn, f wire.Frame) {
	return func(fc *fakeConn, f wire.Frame) {
		send := func(enc func(dst []byte) []byte) { fc.sendWith(enc) }
		switch f.Type {
		case wire.TypeCacheGet:
			var m wire.CacheGet
			_ = m.Decode(f, wire.Limits{})
			v := wire.CacheValue{}
			if string(m.Key) == "k" {
				v = wire.CacheValue{Found: true, Offset: 7, ExpiresAt: 9e18, Value: []byte("value")}
			}
			send(func(dst []byte) []byte { return wire.AppendCacheValue(dst, f.RequestID, v) })
		case wire.TypeCachePut:
			var m wire.CachePut
			_ = m.Decode(f, wire.Limits{})
			switch {
			case string(m.Key) == "gone" && m.Condition.Kind == wire.CondIfOffset:
				fc.fail(f.RequestID, wire.CodePreconditionFailed, "no value", wire.Details{})
			case m.Condition.Kind == wire.CondIfAbsent,
				m.Condition.Kind == wire.CondIfOffset && m.Condition.Offset != 7:
				fc.fail(f.RequestID, wire.CodePreconditionFailed, "held", wire.Details{Offset: wire.U64(7)})
			default:
				exp := m.Expiry.At
				if m.Expiry.Kind == wire.ExpireAfter {
					exp = int64(m.Expiry.TTLMillis) * 1e6
				}
				send(func(dst []byte) []byte {
					return wire.AppendCacheWritten(dst, f.RequestID, wire.CacheWritten{Existed: true, Offset: 8, ExpiresAt: exp})
				})
			}
		case wire.TypeCacheDelete:
			send(func(dst []byte) []byte {
				return wire.AppendCacheWritten(dst, f.RequestID, wire.CacheWritten{Offset: ^uint64(0)})
			})
		case wire.TypeCounterAdd, wire.TypeCounterGet:
			v := wire.CounterValue{}
			if f.Type == wire.TypeCounterAdd {
				v = wire.CounterValue{Exists: true, Sum: 5, Offset: 3}
			}
			send(func(dst []byte) []byte { return wire.AppendCounterValue(dst, f.RequestID, v) })
		default:
			send(func(dst []byte) []byte { return wire.AppendOK(dst, f.RequestID) })
		}
	}
}

func TestCacheCallsDecodeEveryAnswer(t *testing.T) {
	b := newFakeBroker(t, cacheHandler(t))
	c := dialFake(t, b)
	ctx := testCtx(t)
	ca := c.Cache(CacheName{Tenant: "acme", Namespace: "prod", Name: "c"})
	it, err := ca.Get(ctx, []byte("k"))
	if err != nil || !it.Found || it.Offset != 7 || string(it.Value) != "value" || it.ExpiresAt.UnixNano() != 9e18 {
		t.Fatalf("%+v %v", it, err)
	}
	if it, err := ca.Get(ctx, []byte("other")); err != nil || it.Found || it.Value != nil || !it.ExpiresAt.IsZero() {
		t.Fatalf("a miss: %+v %v", it, err)
	}
	w, err := ca.Put(ctx, []byte("k"), []byte("v"), WithTTL(1500*time.Millisecond))
	if err != nil || !w.Existed || w.Offset != 8 || w.ExpiresAt.UnixNano() != 1500e6 {
		t.Fatalf("put with a TTL (the fake echoes it as the expiry): %+v %v", w, err)
	}
	at := time.Unix(0, 123456789)
	if w, err := ca.Put(ctx, []byte("k"), []byte("v"), WithTTL(time.Second), WithExpiresAt(at)); err != nil || !w.ExpiresAt.Equal(at) {
		t.Fatalf("the last expiry option wins: %+v %v", w, err)
	}
	var pe *PreconditionError
	if _, err := ca.PutIfAbsent(ctx, []byte("k"), nil); !errors.As(err, &pe) || !pe.Exists || pe.Current != 7 ||
		!errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("if absent: %v", err)
	}
	if _, err := ca.PutIfOffset(ctx, []byte("k"), nil, 6); !errors.As(err, &pe) || pe.Current != 7 {
		t.Fatalf("if offset: %v", err)
	}
	if _, err := ca.PutIfOffset(ctx, []byte("gone"), nil, 6); !errors.As(err, &pe) || pe.Exists || pe.Current != -1 {
		t.Fatalf("if offset on a key with no value: %v", err)
	}
	if w, err := ca.PutIfOffset(ctx, []byte("k"), nil, 7); err != nil || w.Offset != 8 {
		t.Fatalf("compare and set: %+v %v", w, err)
	}
	if d, err := ca.Delete(ctx, []byte("k")); err != nil || d.Existed || d.Offset != -1 {
		t.Fatalf("a delete that appended nothing: %+v %v", d, err)
	}
	if v, err := ca.Counter("n").Add(ctx, 5); err != nil || !v.Exists || v.Sum != 5 || v.Offset != 3 {
		t.Fatalf("add: %+v %v", v, err)
	}
	if v, err := c.Cache(CacheName{Tenant: "acme", Namespace: "prod", Name: "c"}).Counter("n").Get(ctx); err != nil || v.Exists {
		t.Fatalf("never written: %+v %v", v, err)
	}
	if err := ca.Create(ctx, CacheConfig{Shards: 2, Fsync: Fsync{Kind: FsyncOnCommit}}); err != nil {
		t.Fatal(err)
	}
	if err := ca.Drop(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCacheCallsAreCheckedBeforeTheyAreSent(t *testing.T) {
	b := newFakeBroker(t, cacheHandler(t))
	seen := b.watch(16)
	c := dialFake(t, b)
	ctx := testCtx(t)
	ca := c.Cache(CacheName{Tenant: "acme", Namespace: "prod", Name: "c"})
	long := make([]byte, wire.DefaultKeyBytesMax+1)
	for name, err := range map[string]error{
		"ttl under 1 ms":    second(ca.Put(ctx, []byte("k"), nil, WithTTL(time.Microsecond))),
		"negative offset":   second(ca.PutIfOffset(ctx, []byte("k"), nil, -1)),
		"negative delete":   second(ca.DeleteIfOffset(ctx, []byte("k"), -1)),
		"key over its max":  second(ca.Get(ctx, long)),
		"name over its max": second(c.Cache(CacheName{Tenant: "acme", Namespace: "prod", Name: string(make([]byte, 256))}).Get(ctx, []byte("k"))),
		"shards":            ca.Create(ctx, CacheConfig{Shards: -1}),
	} {
		var se *ServerError
		if !errors.As(err, &se) || !se.Local {
			t.Errorf("%s: %v, want a local refusal", name, err)
		}
	}
	select {
	case f := <-seen:
		t.Fatalf("%v sent", f.Type)
	default:
	}
}

func second[T any](_ T, err error) error { return err }
