package segment

import (
	"errors"
	"fmt"
	"io"
)

// ErrHeaderMissing reports an active segment whose header was never written
// in full: the file was created but records never claimed it, so the log may
// remove it.
var ErrHeaderMissing = errors.New("felix/segment: segment header never written")

// scanChunkBytes is how much of a segment Scan reads at a time.
const scanChunkBytes = 1 << 20

// ScanOptions configure Scan.
type ScanOptions struct {
	// Name is the file's path, used in errors.
	Name string
	// Sealed says the segment is not the log's last: any damage in it is
	// corruption, never a torn tail.
	Sealed bool
	// TornAfter is the byte position from which an active segment may hold
	// writes that were never made durable (the log's recovery point): the
	// first damage at or after it is an unfinished write, whatever follows
	// it, because the page cache may have written later pages before
	// earlier ones. Damage before it is corruption unless it has the shape
	// of a torn tail (zeros to the end). Zero means the whole segment is
	// known durable.
	TornAfter int64
	// IndexIntervalBytes spaces the sparse index entries Scan builds;
	// zero means DefaultIndexIntervalBytes.
	IndexIntervalBytes int
	// Visit, when set, is called for every valid record in order with its
	// byte position. The record aliases Scan's buffer and is valid only
	// during the call. An error from Visit stops the scan and is returned.
	Visit func(pos int64, r *Record) error
}

// Summary is what Scan learned about one segment.
type Summary struct {
	Header         Header
	Records        int64  // valid records
	Next           int64  // offset one past the last valid record (Header.Base when empty)
	End            int64  // byte position just past the last valid record
	LastGeneration uint32 // generation of the last valid record (0 when empty)
	MaxTimestamp   int64  // largest record timestamp (0 when empty)
	Torn           bool   // an unfinished write follows End (active segments only)
	TornBytes      int64  // bytes from End to the end of the unfinished write
	Index          []IndexEntry
}

// Scan verifies every record of the segment held by r (size bytes) and
// summarises it. In an active segment (opts.Sealed false) it reports a torn
// tail rather than failing; every other fault is a *CorruptionError. An
// active segment with no header returns ErrHeaderMissing.
func Scan(r io.ReaderAt, size int64, opts ScanOptions) (Summary, error) {
	s := scanner{r: r, size: size, opts: opts, buf: make([]byte, 0, scanChunkBytes)}
	if s.opts.IndexIntervalBytes <= 0 {
		s.opts.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if err := s.readHeader(); err != nil {
		return Summary{}, err
	}
	if err := s.records(); err != nil {
		return Summary{}, err
	}
	return s.sum, nil
}

type scanner struct {
	r    io.ReaderAt
	size int64
	opts ScanOptions
	sum  Summary

	buf    []byte // bytes [bufPos, bufPos+len(buf)) of the file
	bufPos int64
}

func (s *scanner) readHeader() error {
	b := make([]byte, HeaderSize)
	n, err := s.r.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("felix/segment: %s: reading header: %w", s.opts.Name, err)
	}
	h, herr := DecodeHeader(b[:n])
	if herr != nil {
		if !s.opts.Sealed && (errors.Is(herr, ErrZero) || errors.Is(herr, ErrShort)) {
			return s.headerMissing(n)
		}
		return corrupt(s.opts.Name, 0, herr, "segment header: %v", herr)
	}
	s.sum.Header = h
	s.sum.Next = h.Base
	s.sum.End = HeaderSize
	return nil
}

// headerMissing accepts an unwritten header only when nothing at all was
// written after it either; data behind a missing header is corruption.
func (s *scanner) headerMissing(n int) error {
	z, err := s.lastNonZero(int64(n))
	if err != nil {
		return err
	}
	if z > int64(n) {
		return corrupt(s.opts.Name, 0, ErrZero, "segment header missing but data follows at byte %d", z-1)
	}
	return fmt.Errorf("%w: %s", ErrHeaderMissing, s.opts.Name)
}

// records walks the records after the header.
func (s *scanner) records() error {
	pos := int64(HeaderSize)
	lastEntry := int64(0)
	for pos < s.size {
		b, err := s.window(pos, RecordHeaderSize)
		if err != nil {
			return err
		}
		rec, n, derr := DecodeRecord(b)
		if errors.Is(derr, ErrShort) && n > len(b) {
			if b, err = s.window(pos, n); err != nil {
				return err
			}
			rec, n, derr = DecodeRecord(b)
		}
		if derr != nil {
			return s.damage(pos, n, derr)
		}
		newGen := s.sum.Records == 0 || rec.Generation != s.sum.LastGeneration
		if err := s.accept(pos, &rec); err != nil {
			return err
		}
		if newGen || pos-lastEntry >= int64(s.opts.IndexIntervalBytes) {
			s.addIndexEntry(pos, &rec)
			lastEntry = pos
		}
		pos += int64(n)
		s.sum.End = pos
	}
	return nil
}

func (s *scanner) accept(pos int64, r *Record) error {
	gaps := s.sum.Header.Flags&HeaderFlagCompacted != 0
	if r.Offset != s.sum.Next && !(gaps && r.Offset > s.sum.Next) {
		return corrupt(s.opts.Name, pos, nil, "record offset %d where %d was expected", r.Offset, s.sum.Next)
	}
	if r.Generation < s.sum.LastGeneration {
		return corrupt(s.opts.Name, pos, nil, "record generation %d after generation %d", r.Generation, s.sum.LastGeneration)
	}
	if s.opts.Visit != nil {
		if err := s.opts.Visit(pos, r); err != nil {
			return err
		}
	}
	s.sum.Records++
	s.sum.Next = r.Offset + 1
	s.sum.LastGeneration = r.Generation
	s.sum.MaxTimestamp = max(s.sum.MaxTimestamp, r.Timestamp)
	return nil
}

func (s *scanner) addIndexEntry(pos int64, r *Record) {
	s.sum.Index = append(s.sum.Index, IndexEntry{
		RelOffset:    uint32(r.Offset - s.sum.Header.Base),
		Pos:          uint32(pos),
		Generation:   r.Generation,
		MaxTimestamp: s.sum.MaxTimestamp,
	})
}

// window returns at least need bytes starting at pos (fewer only at the end
// of the file), reading more of the file into the buffer when it must.
func (s *scanner) window(pos int64, need int) ([]byte, error) {
	end := s.bufPos + int64(len(s.buf))
	if pos >= s.bufPos && pos <= end && (pos+int64(need) <= end || end == s.size) {
		return s.buf[pos-s.bufPos:], nil
	}
	want := int(min(int64(max(need, scanChunkBytes)), s.size-pos))
	if cap(s.buf) < want {
		s.buf = make([]byte, 0, want)
	}
	s.buf = s.buf[:want]
	n, err := s.r.ReadAt(s.buf, pos)
	if n < want {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("felix/segment: %s: reading at byte %d: %w", s.opts.Name, pos, err)
		}
		s.size = pos + int64(n) // the file is shorter than its stated size
	}
	s.buf = s.buf[:n]
	s.bufPos = pos
	return s.buf, nil
}

// damage decides what the first unverifiable record at pos is: the clean
// end of the data, a torn tail, or corruption. size is the record's framed
// size when its header was verified, 0 otherwise.
func (s *scanner) damage(pos int64, size int, verdict error) error {
	z, err := s.lastNonZero(pos)
	if err != nil {
		return err
	}
	if z <= pos {
		return nil // only zeros from here on: the clean end of the data
	}
	if s.opts.Sealed {
		return corrupt(s.opts.Name, pos, verdict, "sealed segment: %v", verdict)
	}
	if s.opts.TornAfter > 0 && pos >= s.opts.TornAfter {
		s.markTorn(z - pos)
		return nil
	}
	switch {
	case errors.Is(verdict, ErrShort):
		s.markTorn(z - pos)
		return nil
	case errors.Is(verdict, ErrHeaderChecksum) && z < pos+RecordHeaderSize:
		s.markTorn(z - pos)
		return nil
	case errors.Is(verdict, ErrBodyChecksum) && z < pos+int64(size):
		s.markTorn(z - pos)
		return nil
	case errors.Is(verdict, ErrZero):
		return corrupt(s.opts.Name, pos, verdict, "zeroed record header followed by data up to byte %d", z)
	}
	return corrupt(s.opts.Name, pos, verdict, "%v, with data up to byte %d", verdict, z)
}

func (s *scanner) markTorn(n int64) {
	s.sum.Torn = true
	s.sum.TornBytes = n
}

// lastNonZero returns the position just past the last non-zero byte at or
// after from (from itself when there is none).
func (s *scanner) lastNonZero(from int64) (int64, error) {
	last := from
	buf := make([]byte, scanChunkBytes)
	for pos := from; pos < s.size; {
		n, err := s.r.ReadAt(buf[:min(int64(len(buf)), s.size-pos)], pos)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, fmt.Errorf("felix/segment: %s: reading at byte %d: %w", s.opts.Name, pos, err)
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] != 0 {
				last = pos + int64(i) + 1
				break
			}
		}
		pos += int64(n)
	}
	return last, nil
}
