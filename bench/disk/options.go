package disk

import (
	"errors"
	"fmt"
	"time"

	"github.com/felixbroker/felix/bench"
)

// ErrInvalid marks options a measurement refuses before touching the disk.
var ErrInvalid = errors.New("felix/bench/disk: invalid options")

// Defaults for zero option fields.
const (
	syncRecordBytesDefault  = 4096
	groupRecordBytesDefault = 1024 // the record size of DESIGN.md's group-commit figures
	pageWriteBytesDefault   = 1 << 20
	growingFileBytesDefault = 256 << 20
	zeroedFileBytesDefault  = 64 << 20
	writersMax              = 4096
	recordBytesMax          = 64 << 20
)

// File says how the file under test starts.
type File uint8

const (
	// Growing: an empty file that every write extends, so every sync must
	// also commit the new size and block allocation (a journal commit).
	Growing File = iota
	// Prezeroed: a file zero-filled and synced before the clock starts, so
	// writes overwrite blocks that already exist and a sync flushes data
	// only. DESIGN.md measured it much faster; both are measured.
	Prezeroed
)

func (f File) String() string {
	if f == Prezeroed {
		return "prezeroed"
	}
	return "growing"
}

// SyncOptions shape the fdatasync latency loop: write RecordBytes, sync,
// repeat, one at a time.
type SyncOptions struct {
	RecordBytes int           // bytes per write; default 4096
	Count       int64         // write+sync rounds; 0: until Duration
	Duration    time.Duration // 0: until Count
	File        File
	// FileBytes bounds the file: a Prezeroed file is zero-filled to it and
	// written round and round; a Growing file is cut back to empty when the
	// next write would pass it (that one round includes an ftruncate).
	// Default 64 MiB prezeroed, 256 MiB growing.
	FileBytes int64
	Progress  bench.ProgressHook // nil: no progress line
}

// GroupOptions shape the group-commit ceiling: Writers goroutines each hand
// one record at a time to a single write+fdatasync loop and wait for its
// acknowledgement; each flush covers every record queued before it began.
type GroupOptions struct {
	Writers     int           // concurrent writers, each with one record outstanding
	RecordBytes int           // default 1024
	Records     int64         // records acknowledged, all writers together; 0: until Duration
	Duration    time.Duration // 0: until Records
	File        File
	FileBytes   int64 // as in SyncOptions; at least Writers*RecordBytes
	Progress    bench.ProgressHook
}

// PageCacheOptions shape the page-cache bandwidth loop: large writes, never
// synced, round and round a file small enough to stay in memory.
type PageCacheOptions struct {
	WriteBytes int           // bytes per write; default 1 MiB
	TotalBytes int64         // bytes written in all; 0: until Duration
	Duration   time.Duration // 0: until TotalBytes
	FileBytes  int64         // default 64 MiB
	Progress   bench.ProgressHook
}

func (o SyncOptions) withDefaults() (SyncOptions, error) {
	o.RecordBytes = orDefault(o.RecordBytes, syncRecordBytesDefault)
	o.FileBytes = fileBytes(o.FileBytes, o.File)
	return o, check(o.Count, o.Duration, o.RecordBytes, 1, o.FileBytes)
}

func (o GroupOptions) withDefaults() (GroupOptions, error) {
	o.RecordBytes = orDefault(o.RecordBytes, groupRecordBytesDefault)
	o.FileBytes = fileBytes(o.FileBytes, o.File)
	if o.Writers < 1 || o.Writers > writersMax {
		return o, fmt.Errorf("%w: %d writers, want 1..%d", ErrInvalid, o.Writers, writersMax)
	}
	return o, check(o.Records, o.Duration, o.RecordBytes, o.Writers, o.FileBytes)
}

func (o PageCacheOptions) withDefaults() (PageCacheOptions, error) {
	o.WriteBytes = orDefault(o.WriteBytes, pageWriteBytesDefault)
	if o.FileBytes == 0 {
		o.FileBytes = zeroedFileBytesDefault
	}
	writes := int64(0)
	if o.TotalBytes > 0 {
		writes = max(1, o.TotalBytes/int64(o.WriteBytes))
	}
	return o, check(writes, o.Duration, o.WriteBytes, 1, o.FileBytes)
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func fileBytes(v int64, f File) int64 {
	switch {
	case v != 0:
		return v
	case f == Prezeroed:
		return zeroedFileBytesDefault
	}
	return growingFileBytesDefault
}

// check refuses a run without a bound, and writes that do not fit the file.
func check(count int64, d time.Duration, recordBytes, perFlush int, fileBytes int64) error {
	switch {
	case count <= 0 && d <= 0:
		return bench.ErrNoLimit
	case count < 0 || d < 0:
		return fmt.Errorf("%w: negative count or duration", ErrInvalid)
	case recordBytes < 1 || recordBytes > recordBytesMax:
		return fmt.Errorf("%w: %d-byte records, want 1..%d", ErrInvalid, recordBytes, recordBytesMax)
	case int64(recordBytes)*int64(perFlush) > fileBytes:
		return fmt.Errorf("%w: one flush of %d x %d bytes does not fit a %d-byte file", ErrInvalid, perFlush, recordBytes, fileBytes)
	}
	return nil
}
