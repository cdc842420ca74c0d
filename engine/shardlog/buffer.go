package shardlog

// buffer holds framed records waiting to be written. Appenders fill one
// under Log.mu while the committer writes the other: two buffers in all,
// reused for the life of the log.
type buffer struct {
	data   []byte
	chunks []chunk
	first  int64 // offset of the first record
	next   int64 // offset one past the last record
	// appends is how many Appends placed records here (a FlushScheduler
	// gathers by it).
	appends int
}

// chunk is the part of a buffer bound for one segment. A buffer has more
// than one only when a rollover falls inside it.
type chunk struct {
	seg        *seg
	start, end int   // byte range in buffer.data
	pos        int64 // file position of data[start]
}

func newBuffer(capacity int) *buffer {
	return &buffer{data: make([]byte, 0, capacity), chunks: make([]chunk, 0, 4)}
}

func (b *buffer) empty() bool { return len(b.data) == 0 }

func (b *buffer) reset(next int64) {
	b.data = b.data[:0]
	clear(b.chunks)
	b.chunks = b.chunks[:0]
	b.first, b.next = next, next
	b.appends = 0
}

// chunkFor returns the chunk that records for s at file position pos go
// into, starting a new one when s is not the last chunk's segment.
func (b *buffer) chunkFor(s *seg, pos int64) *chunk {
	if n := len(b.chunks); n > 0 && b.chunks[n-1].seg == s {
		return &b.chunks[n-1]
	}
	b.chunks = append(b.chunks, chunk{seg: s, start: len(b.data), end: len(b.data), pos: pos})
	return &b.chunks[len(b.chunks)-1]
}

// chunkFirst is the offset of the first record of chunk i (b.next for
// i == len(b.chunks)). Every chunk after the first starts a segment, at
// its base.
func (b *buffer) chunkFirst(i int) int64 {
	switch {
	case i == 0:
		return b.first
	case i == len(b.chunks):
		return b.next
	}
	return b.chunks[i].seg.base
}

// chunkStart is where chunk i begins in b.data (len(b.data) for
// i == len(b.chunks)).
func (b *buffer) chunkStart(i int) int {
	if i == len(b.chunks) {
		return len(b.data)
	}
	return b.chunks[i].start
}
