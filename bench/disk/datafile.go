package disk

import (
	"fmt"
	"os"
)

// zeroChunkBytes is the write size used to zero-fill a Prezeroed file.
const zeroChunkBytes = 1 << 20

// dataFile is the file under test: created in the directory under test,
// removed when closed. Owned by one goroutine.
type dataFile struct {
	f     *os.File
	kind  File
	limit int64 // FileBytes
	off   int64 // where the next write goes
}

func openDataFile(dir string, kind File, limit int64) (*dataFile, error) {
	f, err := os.CreateTemp(dir, "felix-bench-*.dat")
	if err != nil {
		return nil, fmt.Errorf("felix/bench/disk: %w", err)
	}
	d := &dataFile{f: f, kind: kind, limit: limit}
	if kind == Prezeroed {
		if err := d.zeroFill(); err != nil {
			d.close()
			return nil, err
		}
	}
	return d, nil
}

// zeroFill writes zeros over the whole file and syncs it (data, size and
// all), so later writes overwrite blocks that exist.
func (d *dataFile) zeroFill() error {
	zeros := make([]byte, zeroChunkBytes)
	for off := int64(0); off < d.limit; off += zeroChunkBytes {
		n := min(int64(len(zeros)), d.limit-off)
		if _, err := d.f.WriteAt(zeros[:n], off); err != nil {
			return fmt.Errorf("felix/bench/disk: zero-fill: %w", err)
		}
	}
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("felix/bench/disk: sync after zero-fill: %w", err)
	}
	return nil
}

// next returns the offset for the next n bytes. When they would pass the
// limit a Prezeroed file starts again at 0 and a Growing one is first cut
// back to empty, so that it keeps growing.
func (d *dataFile) next(n int) (int64, error) {
	if d.off+int64(n) > d.limit {
		if d.kind == Growing {
			if err := d.f.Truncate(0); err != nil {
				return 0, fmt.Errorf("felix/bench/disk: cut back growing file: %w", err)
			}
		}
		d.off = 0
	}
	off := d.off
	d.off += int64(n)
	return off, nil
}

func (d *dataFile) close() error {
	err := d.f.Close()
	if rmErr := os.Remove(d.f.Name()); err == nil {
		err = rmErr
	}
	return err
}

// pattern fills b with non-zero bytes, so no write is of zeros over zeros.
func pattern(b []byte) []byte {
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}
