package engine

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// logStore is what a shard needs of its log: the durable shardlog.Log, or a
// memLog for a stream that is not durable.
type logStore interface {
	Append(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (int64, error)
	Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error)
	Start() int64
	End() int64
	Close() error
}

// memChunkBytes is the size of each chunk of a memLog.
const memChunkBytes = 256 << 10

// memLog is the bounded in-memory log of a stream that is not durable:
// records framed as on disk, in chunks, the oldest chunk dropped when the
// log is over its byte bound. Offsets are dense as in a durable log, so a
// subscriber still sees a drop as a gap. An append is acknowledged as soon
// as it is in memory.
type memLog struct {
	maxBytes  int
	onVisible func(first, next int64, records []byte)
	now       func() int64

	mu     sync.Mutex // serializes appends and their OnVisible, guards chunks
	chunks []memChunk
	free   [][]byte
	bytes  int
	closed bool

	start atomic.Int64
	end   atomic.Int64
}

type memChunk struct {
	first int64 // offset of the chunk's first record
	data  []byte
}

func newMemLog(maxBytes int, now func() int64, onVisible func(first, next int64, records []byte)) *memLog {
	return &memLog{maxBytes: max(maxBytes, memChunkBytes), onVisible: onVisible, now: now}
}

func (m *memLog) Start() int64 { return m.start.Load() }
func (m *memLog) End() int64   { return m.end.Load() }

func (m *memLog) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}

func (m *memLog) Append(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (int64, error) {
	if len(entries) == 0 {
		return 0, shardlog.ErrEmptyBatch
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, shardlog.ErrClosed
	}
	first := m.end.Load()
	next := first
	var now int64
	pieceStart, pieceFirst := -1, first
	for i := range entries {
		e := &entries[i]
		size := segment.RecordSize(len(e.Key), len(e.Value))
		if c := m.tail(); c == nil || len(c.data)+size > cap(c.data) {
			m.flushPiece(pieceStart, pieceFirst, next)
			m.newChunk(next, size)
			pieceStart, pieceFirst = 0, next
		} else if pieceStart < 0 {
			pieceStart = len(c.data)
		}
		ts := e.Timestamp
		if ts == 0 {
			if now == 0 {
				now = m.now()
			}
			ts = now
		}
		c := m.tail()
		c.data = segment.AppendRecordParts(c.data, next, gen, e.Flags, ts, e.Key, e.Value)
		m.bytes += size
		next++
		m.end.Store(next)
	}
	m.flushPiece(pieceStart, pieceFirst, next)
	m.evict()
	if w != nil {
		w.Committed(first, next-1, nil)
	}
	return first, nil
}

// flushPiece hands the records appended to the tail chunk since start to
// OnVisible.
func (m *memLog) flushPiece(start int, first, next int64) {
	if start < 0 || next == first || m.onVisible == nil {
		return
	}
	c := m.tail()
	m.onVisible(first, next, c.data[start:])
}

func (m *memLog) tail() *memChunk {
	if len(m.chunks) == 0 {
		return nil
	}
	return &m.chunks[len(m.chunks)-1]
}

func (m *memLog) newChunk(first int64, need int) {
	var buf []byte
	if n := len(m.free); n > 0 && need <= memChunkBytes {
		buf, m.free = m.free[n-1][:0], m.free[:n-1]
	} else {
		buf = make([]byte, 0, max(need, memChunkBytes))
	}
	m.chunks = append(m.chunks, memChunk{first: first, data: buf})
}

// evict drops the oldest chunks while the log is over its bound, keeping
// the tail chunk.
func (m *memLog) evict() {
	for m.bytes > m.maxBytes && len(m.chunks) > 1 {
		old := m.chunks[0]
		m.bytes -= len(old.data)
		if cap(old.data) == memChunkBytes {
			m.free = append(m.free, old.data)
		}
		m.chunks[0] = memChunk{}
		m.chunks = m.chunks[1:]
		m.start.Store(m.chunks[0].first)
	}
}

func (m *memLog) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	start, end := m.start.Load(), m.end.Load()
	switch {
	case from < start:
		return dst, from, &shardlog.OffsetError{Offset: from, Start: start, End: end, Kind: shardlog.ErrBelowStart}
	case from > end:
		return dst, from, &shardlog.OffsetError{Offset: from, Start: start, End: end, Kind: shardlog.ErrPastEnd}
	case from == end:
		return dst, from, nil
	}
	i := sort.Search(len(m.chunks), func(i int) bool { return m.chunks[i].first > from }) - 1
	c := m.chunks[i]
	pos, off := 0, c.first
	for off < from {
		size, _ := segment.PeekSize(c.data[pos:])
		pos += size
		off++
	}
	begin := pos
	for pos < len(c.data) && (pos == begin || pos-begin < maxBytes) {
		size, _ := segment.PeekSize(c.data[pos:])
		if pos > begin && pos+size-begin > maxBytes {
			break
		}
		pos += size
		off++
	}
	return append(dst, c.data[begin:pos]...), off, nil
}
