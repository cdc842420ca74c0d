package wire

// WatchEventKind says what a watched write did.
type WatchEventKind uint8

const (
	WatchPut    WatchEventKind = 1 // a put, with its value
	WatchDelete WatchEventKind = 2 // a delete, a change with no value
)

// CacheWatchEvent is one applied write pushed to a watch, request id 0.
//
//	u64 watch id | u64 offset | u8 kind (1 put, 2 delete) |
//	u8 flags (0x01 snapshot) | uvarint key len | key |
//	uvarint value len | value (empty for a delete)
//
// Snapshot marks a current value delivered as state rather than as a live
// change: a retained watch's first deliveries, and the resnapshot that
// answers a resume offset compaction has collapsed. WATCH_STARTED says how
// many snapshot events come before the live ones.
type CacheWatchEvent struct {
	WatchID  uint64
	Offset   uint64 // the log offset of the write
	Kind     WatchEventKind
	Snapshot bool
	Key      []byte
	Value    []byte
}

const watchFlagSnapshot = 0x01

// AppendCacheWatchEvent appends a CACHE_WATCH_EVENT frame. A delete with a
// value, or an unknown kind, panics.
func AppendCacheWatchEvent(dst []byte, requestID uint64, m CacheWatchEvent) []byte {
	if (m.Kind != WatchPut && m.Kind != WatchDelete) || (m.Kind == WatchDelete && len(m.Value) != 0) {
		panic("felix/wire: a watch event is a put with a value or a delete without one")
	}
	dst, start := beginFrame(dst, TypeCacheWatchEvent, 0, requestID)
	dst = appendU64(dst, m.WatchID)
	dst = appendU64(dst, m.Offset)
	dst = append(dst, byte(m.Kind))
	if m.Snapshot {
		dst = append(dst, watchFlagSnapshot)
	} else {
		dst = append(dst, 0)
	}
	dst = appendBlob(dst, m.Key)
	dst = appendBlob(dst, m.Value)
	return endFrame(dst, start)
}

// Decode reads a CACHE_WATCH_EVENT frame; Key and Value alias it.
func (m *CacheWatchEvent) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeCacheWatchEvent); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.WatchID = c.u64()
	m.Offset = c.u64()
	m.Kind = WatchEventKind(c.u8())
	flags := c.u8()
	if c.err == nil && ((m.Kind != WatchPut && m.Kind != WatchDelete) || flags&^watchFlagSnapshot != 0) {
		c.fail(errBadEnum)
	}
	m.Snapshot = flags&watchFlagSnapshot != 0
	m.Key = c.key(lim.keyBytes())
	m.Value = c.blob()
	if c.err == nil && m.Kind == WatchDelete && len(m.Value) != 0 {
		c.fail(errDeleteValue)
	}
	return c.finish()
}
