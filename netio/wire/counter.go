package wire

// CounterAdd folds Delta into a counter. A counter is scoped and routed as
// a cache key but stored beside the cache, so a counter and a cache value
// sharing a key are unrelated.
//
//	cache ref | uvarint key len | key | i64 delta
type CounterAdd struct {
	Cache CacheRef
	Key   []byte
	Delta int64
}

// CounterGet reads a counter.
//
//	cache ref | uvarint key len | key
type CounterGet struct {
	Cache CacheRef
	Key   []byte
}

// CounterValue answers both: the sum (including the add it answers) and
// the offset of the last add folded into it. Never-written is Exists false,
// distinct from a sum of zero.
//
//	u8 exists | i64 sum | u64 offset
type CounterValue struct {
	Exists bool
	Sum    int64
	Offset uint64
}

// AppendCounterAdd appends a COUNTER_ADD frame.
func AppendCounterAdd(dst []byte, requestID uint64, m CounterAdd) []byte {
	dst, start := beginFrame(dst, TypeCounterAdd, 0, requestID)
	dst = appendCacheRef(dst, m.Cache)
	dst = appendBlob(dst, m.Key)
	dst = appendI64(dst, m.Delta)
	return endFrame(dst, start)
}

// Decode reads a COUNTER_ADD frame; m aliases it.
func (m *CounterAdd) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeCounterAdd); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Cache = c.cacheRef(lim.nameBytes())
	m.Key = c.key(lim.keyBytes())
	m.Delta = c.i64()
	return c.finish()
}

// AppendCounterGet appends a COUNTER_GET frame.
func AppendCounterGet(dst []byte, requestID uint64, m CounterGet) []byte {
	dst, start := beginFrame(dst, TypeCounterGet, 0, requestID)
	dst = appendCacheRef(dst, m.Cache)
	dst = appendBlob(dst, m.Key)
	return endFrame(dst, start)
}

// Decode reads a COUNTER_GET frame; m aliases it.
func (m *CounterGet) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeCounterGet); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Cache = c.cacheRef(lim.nameBytes())
	m.Key = c.key(lim.keyBytes())
	return c.finish()
}

// AppendCounterValue appends a COUNTER_VALUE frame.
func AppendCounterValue(dst []byte, requestID uint64, m CounterValue) []byte {
	dst, start := beginFrame(dst, TypeCounterValue, 0, requestID)
	dst = appendBool(dst, m.Exists)
	dst = appendI64(dst, m.Sum)
	dst = appendU64(dst, m.Offset)
	return endFrame(dst, start)
}

// Decode reads a COUNTER_VALUE frame.
func (m *CounterValue) Decode(f Frame, _ Limits) error {
	if err := expectType(f, TypeCounterValue); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Exists = c.bool8()
	m.Sum = c.i64()
	m.Offset = c.u64()
	return c.finish()
}
