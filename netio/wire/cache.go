package wire

// CacheGet reads one key.
//
//	cache ref | uvarint key len | key
type CacheGet struct {
	Cache CacheRef
	Key   []byte
}

// CachePut writes one key.
//
//	cache ref | uvarint key len | key | u8 options |
//	[u64 expected offset, if option 0x02] |
//	[u64 ttl millis, if option 0x04] | [i64 expires at unix ns, if 0x08] |
//	uvarint value len | value
//
//	options: 0x01 only if absent, 0x02 only if the key's offset equals,
//	         0x04 ttl, 0x08 absolute expiry. 0x01 and 0x02 exclude each
//	         other, as do 0x04 and 0x08; other bits are malformed.
type CachePut struct {
	Cache     CacheRef
	Key       []byte
	Condition Condition
	Expiry    Expiry
	Value     []byte
}

// CacheDelete removes one key; only CondIfOffset applies.
//
//	cache ref | uvarint key len | key | u8 options (0x02 only) |
//	[u64 expected offset, if option 0x02]
type CacheDelete struct {
	Cache     CacheRef
	Key       []byte
	Condition Condition
}

// CacheValue answers CACHE_GET. A missing (or expired) key has Found false,
// zero offset and expiry, and no value.
//
//	u8 found | u64 offset | i64 expires at unix ns (0: none) |
//	uvarint value len | value
type CacheValue struct {
	Found     bool
	Offset    uint64 // the log offset of the write that produced the value
	ExpiresAt int64
	Value     []byte
}

// CacheWritten answers CACHE_PUT and CACHE_DELETE: the offset of the record
// the write appended, whether the key held a value before, and the expiry
// now in force (0 for a delete or no expiry). A failed condition is an
// ERROR precondition_failed with the current offset in its details.
//
//	u8 existed | u64 offset | i64 expires at unix ns
type CacheWritten struct {
	Existed   bool
	Offset    uint64
	ExpiresAt int64
}

// ConditionKind says when a write applies.
type ConditionKind uint8

const (
	CondAlways   ConditionKind = iota // apply unconditionally
	CondIfAbsent                      // put only if the key holds no live value
	CondIfOffset                      // only if the key's current offset is Condition.Offset
)

// Condition is a write's precondition.
type Condition struct {
	Kind   ConditionKind
	Offset uint64 // for CondIfOffset
}

// ExpiryKind says how a put's value expires.
type ExpiryKind uint8

const (
	ExpireNever ExpiryKind = iota
	ExpireAfter            // Expiry.TTLMillis after the broker applies the write
	ExpireAt               // at Expiry.At, unix nanoseconds
)

// Expiry is a put's time to live, kept by the broker as an absolute time.
type Expiry struct {
	Kind      ExpiryKind
	TTLMillis uint64 // for ExpireAfter
	At        int64  // for ExpireAt
}

const (
	optIfAbsent  = 0x01
	optIfOffset  = 0x02
	optTTL       = 0x04
	optExpiresAt = 0x08
)

// AppendCacheGet appends a CACHE_GET frame.
func AppendCacheGet(dst []byte, requestID uint64, m CacheGet) []byte {
	dst, start := beginFrame(dst, TypeCacheGet, 0, requestID)
	dst = appendCacheRef(dst, m.Cache)
	dst = appendBlob(dst, m.Key)
	return endFrame(dst, start)
}

// Decode reads a CACHE_GET frame; m aliases it.
func (m *CacheGet) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeCacheGet); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Cache = c.cacheRef(lim.nameBytes())
	m.Key = c.key(lim.keyBytes())
	return c.finish()
}

// AppendCachePut appends a CACHE_PUT frame. An unknown condition or expiry
// kind panics.
func AppendCachePut(dst []byte, requestID uint64, m CachePut) []byte {
	dst, start := beginFrame(dst, TypeCachePut, 0, requestID)
	dst = appendCacheRef(dst, m.Cache)
	dst = appendBlob(dst, m.Key)
	dst = append(dst, conditionOption(m.Condition)|expiryOption(m.Expiry))
	dst = appendConditionExpiry(dst, m.Condition, m.Expiry)
	dst = appendBlob(dst, m.Value)
	return endFrame(dst, start)
}

// Decode reads a CACHE_PUT frame; m aliases it.
func (m *CachePut) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeCachePut); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Cache = c.cacheRef(lim.nameBytes())
	m.Key = c.key(lim.keyBytes())
	m.Condition, m.Expiry = c.conditionExpiry(optIfAbsent | optIfOffset | optTTL | optExpiresAt)
	m.Value = c.blob()
	return c.finish()
}

// AppendCacheDelete appends a CACHE_DELETE frame. A condition other than
// CondAlways or CondIfOffset panics.
func AppendCacheDelete(dst []byte, requestID uint64, m CacheDelete) []byte {
	if m.Condition.Kind == CondIfAbsent {
		panic("felix/wire: CACHE_DELETE cannot be conditional on absence")
	}
	dst, start := beginFrame(dst, TypeCacheDelete, 0, requestID)
	dst = appendCacheRef(dst, m.Cache)
	dst = appendBlob(dst, m.Key)
	dst = append(dst, conditionOption(m.Condition))
	dst = appendConditionExpiry(dst, m.Condition, Expiry{})
	return endFrame(dst, start)
}

// Decode reads a CACHE_DELETE frame; m aliases it.
func (m *CacheDelete) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeCacheDelete); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Cache = c.cacheRef(lim.nameBytes())
	m.Key = c.key(lim.keyBytes())
	m.Condition, _ = c.conditionExpiry(optIfOffset)
	return c.finish()
}

// AppendCacheValue appends a CACHE_VALUE frame.
func AppendCacheValue(dst []byte, requestID uint64, m CacheValue) []byte {
	if !m.Found && len(m.Value) != 0 {
		panic("felix/wire: a CACHE_VALUE that was not found carries a value")
	}
	dst, start := beginFrame(dst, TypeCacheValue, 0, requestID)
	dst = appendBool(dst, m.Found)
	dst = appendU64(dst, m.Offset)
	dst = appendI64(dst, m.ExpiresAt)
	dst = appendBlob(dst, m.Value)
	return endFrame(dst, start)
}

// Decode reads a CACHE_VALUE frame; Value aliases it.
func (m *CacheValue) Decode(f Frame, _ Limits) error {
	if err := expectType(f, TypeCacheValue); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Found = c.bool8()
	m.Offset = c.u64()
	m.ExpiresAt = c.i64()
	m.Value = c.blob()
	if c.err == nil && !m.Found && len(m.Value) != 0 {
		c.fail(errAbsentValue)
	}
	return c.finish()
}

// AppendCacheWritten appends a CACHE_WRITTEN frame.
func AppendCacheWritten(dst []byte, requestID uint64, m CacheWritten) []byte {
	dst, start := beginFrame(dst, TypeCacheWritten, 0, requestID)
	dst = appendBool(dst, m.Existed)
	dst = appendU64(dst, m.Offset)
	dst = appendI64(dst, m.ExpiresAt)
	return endFrame(dst, start)
}

// Decode reads a CACHE_WRITTEN frame.
func (m *CacheWritten) Decode(f Frame, _ Limits) error {
	if err := expectType(f, TypeCacheWritten); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Existed = c.bool8()
	m.Offset = c.u64()
	m.ExpiresAt = c.i64()
	return c.finish()
}

func conditionOption(cond Condition) byte {
	switch cond.Kind {
	case CondAlways:
		return 0
	case CondIfAbsent:
		return optIfAbsent
	case CondIfOffset:
		return optIfOffset
	}
	panic("felix/wire: unknown ConditionKind")
}

func expiryOption(e Expiry) byte {
	switch e.Kind {
	case ExpireNever:
		return 0
	case ExpireAfter:
		return optTTL
	case ExpireAt:
		return optExpiresAt
	}
	panic("felix/wire: unknown ExpiryKind")
}

func appendConditionExpiry(b []byte, cond Condition, e Expiry) []byte {
	if cond.Kind == CondIfOffset {
		b = appendU64(b, cond.Offset)
	}
	switch e.Kind {
	case ExpireAfter:
		b = appendU64(b, e.TTLMillis)
	case ExpireAt:
		b = appendI64(b, e.At)
	}
	return b
}

// conditionExpiry reads the options byte and the fields it announces;
// allowed is the set of option bits the frame type permits.
func (c *cursor) conditionExpiry(allowed byte) (cond Condition, e Expiry) {
	opt := c.u8()
	if opt&^allowed != 0 || opt&(optIfAbsent|optIfOffset) == optIfAbsent|optIfOffset ||
		opt&(optTTL|optExpiresAt) == optTTL|optExpiresAt {
		c.fail(errBadCondition)
		return cond, e
	}
	switch {
	case opt&optIfAbsent != 0:
		cond.Kind = CondIfAbsent
	case opt&optIfOffset != 0:
		cond = Condition{Kind: CondIfOffset, Offset: c.u64()}
	}
	switch {
	case opt&optTTL != 0:
		e = Expiry{Kind: ExpireAfter, TTLMillis: c.u64()}
	case opt&optExpiresAt != 0:
		e = Expiry{Kind: ExpireAt, At: c.i64()}
	}
	return cond, e
}
