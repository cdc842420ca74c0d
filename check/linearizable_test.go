package check

import "testing"

// Cache, counter and cursor histories: each model's anomaly found with its
// kind and no other, and the histories a correct store may give pass,
// unknown outcomes and retries among them.
func TestModelAnomaliesOnHandMadeHistories(t *testing.T) {
	put := func(k, v string) KVInput { return KVInput{Op: KVPut, Key: k, Value: v} }
	get := KVInput{Op: KVGet, Key: "k"}
	add := func(d int64) CounterInput { return CounterInput{Op: CounterAdd, Key: "n", Delta: d} }
	cget := CounterInput{Op: CounterGet, Key: "n"}
	cases := []struct {
		name  string
		build func(s *script)
		want  []Kind
	}{
		{"cache: clean, with a conditional put and a delete", func(s *script) {
			s.ok(1, put("k", "v1"), KVOutput{})
			s.ok(2, get, KVOutput{Found: true, Value: "v1"})
			s.ok(2, KVInput{Op: KVCompareAndSet, Key: "k", Expected: "v1", Value: "v2"}, KVOutput{Found: true})
			s.ok(1, KVInput{Op: KVCompareAndSet, Key: "k", Expected: "v1", Value: "v3"}, KVOutput{Found: false})
			s.ok(1, KVInput{Op: KVDelete, Key: "k"}, KVOutput{Found: true})
			s.ok(2, get, KVOutput{})
		}, nil},
		{"cache: a put whose outcome is unknown may or may not land", func(s *script) {
			s.unknown(1, put("k", "v1"))
			s.ok(2, get, KVOutput{})
			s.ok(2, get, KVOutput{Found: true, Value: "v1"})
		}, nil},
		{"cache: a failed put never lands", func(s *script) {
			s.fail(1, put("k", "v1"))
			s.ok(2, get, KVOutput{Found: true, Value: "v1"})
		}, []Kind{CacheNonlinearizable}},
		{"cache: a stale read after a put returned", func(s *script) {
			s.ok(1, put("k", "v1"), KVOutput{})
			s.ok(2, get, KVOutput{})
		}, []Kind{CacheNonlinearizable}},
		{"cache: a conditional put applied, then its old value read", func(s *script) {
			s.ok(1, put("k", "v1"), KVOutput{})
			s.ok(2, KVInput{Op: KVCompareAndSet, Key: "k", Expected: "v1", Value: "v2"}, KVOutput{Found: true})
			s.ok(1, get, KVOutput{Found: true, Value: "v1"})
		}, []Kind{CacheNonlinearizable}},
		{"counter: clean, concurrent adds", func(s *script) {
			a, b := s.invoke(1, add(1)), s.invoke(2, add(2))
			b.Ok(s.tick(), CounterOutput{Value: 2})
			a.Ok(s.tick(), CounterOutput{Value: 3})
			s.ok(1, cget, CounterOutput{Value: 3})
		}, nil},
		{"counter: an unknown add landed before an ok one", func(s *script) {
			s.unknown(1, add(1))
			s.ok(2, add(1), CounterOutput{Value: 2})
		}, nil},
		{"counter: concurrent adds returning sums no order gives", func(s *script) {
			a, b := s.invoke(1, add(1)), s.invoke(2, add(2))
			a.Ok(s.tick(), CounterOutput{Value: 3})
			b.Ok(s.tick(), CounterOutput{Value: 3})
		}, []Kind{CounterNonlinearizable}},
		{"counter: a sum below what was definitely applied", func(s *script) {
			s.ok(1, add(1), CounterOutput{Value: 1})
			s.ok(1, add(1), CounterOutput{Value: 1})
		}, []Kind{CounterNonlinearizable, CounterBounds}},
		{"counter: a retried add may land twice", func(s *script) {
			s.ok(1, CounterInput{Op: CounterAdd, Key: "n", Delta: 1, Retries: 1}, CounterOutput{Value: 2})
			s.ok(1, cget, CounterOutput{Value: 2})
		}, nil},
		{"counter: a get above every add that may have landed", func(s *script) {
			s.ok(1, CounterInput{Op: CounterAdd, Key: "n", Delta: 1, Retries: 1}, CounterOutput{Value: 1})
			s.unknown(2, add(5))
			s.ok(1, cget, CounterOutput{Value: 8})
		}, []Kind{CounterBounds}},
		{"counter: negative deltas bound the other way", func(s *script) {
			s.ok(1, add(-2), CounterOutput{Value: -2})
			s.unknown(2, CounterInput{Op: CounterAdd, Key: "n", Delta: -1, Retries: 2})
			s.ok(1, cget, CounterOutput{Value: -5})
			s.ok(1, cget, CounterOutput{Value: -6})
		}, []Kind{CounterBounds}},
		{"cursor: clean", func(s *script) {
			s.ok(1, CursorInput{Op: CursorCommit, Cursor: "g/0", Offset: 5}, CursorOutput{})
			s.unknown(1, CursorInput{Op: CursorCommit, Cursor: "g/0", Offset: 7})
			s.ok(2, CursorInput{Op: CursorGet, Cursor: "g/0"}, CursorOutput{Offset: 5})
			s.ok(2, CursorInput{Op: CursorGet, Cursor: "g/0"}, CursorOutput{Offset: 7})
		}, nil},
		{"cursor: a commit that returned, then the old position read", func(s *script) {
			s.ok(1, CursorInput{Op: CursorCommit, Cursor: "g/0", Offset: 5}, CursorOutput{})
			s.ok(1, CursorInput{Op: CursorCommit, Cursor: "g/0", Offset: 7}, CursorOutput{})
			s.ok(2, CursorInput{Op: CursorGet, Cursor: "g/0"}, CursorOutput{Offset: 5})
		}, []Kind{CursorNonlinearizable}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s script
			c.build(&s)
			r := Check(s.history(), Options{})
			requireKinds(t, &r, c.want...)
		})
	}
}
