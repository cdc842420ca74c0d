package catalog

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
)

// The reserve is a file of zeros beside the catalog, <File>.reserve, that
// holds the space a Delete needs to write the new list when the disk is
// full. Its bytes mean nothing; it is synced when written so the space
// stays held across a crash (one whose entry a crash lost left its space
// free, and Open takes it again). It is large enough for the list plus a
// margin, and at least reserveBytesMin.
const (
	reserveSuffix = ".reserve"
	// reserveBytesMin is the smallest reserve: a catalog of a few hundred
	// entries, written again.
	reserveBytesMin = 64 << 10
	// reserveSlackBytes is what writing the list may take beyond its own
	// bytes: a new inode, a directory block.
	reserveSlackBytes = 16 << 10
	// zeroBytes is the size of each write that fills the reserve.
	zeroBytes = 64 << 10
)

// zeros is what every reserve is written with, never modified.
var zeros = make([]byte, zeroBytes)

func (c *File[K, E]) reservePath() string {
	return filepath.Join(c.dir, c.format.File+reserveSuffix)
}

// Reserve takes the reserve back, or grows it to cover the catalog as it
// is, after space was freed (a Delete gave it up): the next Delete on a
// full disk needs it. It matches ErrNoSpace while there is no room yet.
func (c *File[K, E]) Reserve() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fs == nil {
		return nil
	}
	b, err := c.encode()
	if err != nil {
		return err
	}
	return c.takeReserve(len(b))
}

// takeReserve makes the reserve cover a catalog of catalogBytes, writing it
// (twice the size needed, so a growing catalog rewrites it seldom) when it
// is missing or too small. Called with mu held, or from Open.
func (c *File[K, E]) takeReserve(catalogBytes int) error {
	if c.fs == nil {
		return nil
	}
	need := int64(catalogBytes) + reserveSlackBytes
	path := c.reservePath()
	if size, err := c.fs.Stat(path); err == nil && size >= need {
		return nil
	}
	err := c.writeZeros(path, max(reserveBytesMin, 2*need))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%w: taking the catalog's reserve %s: %w", ErrNoSpace, path, err)
	}
	return fmt.Errorf("felix/catalog: taking the catalog's reserve %s: %w", path, err)
}

// writeZeros writes size zero bytes into path from its start, creating it
// when it is missing. A write refused part way leaves the part written:
// a smaller reserve is still a reserve.
func (c *File[K, E]) writeZeros(path string, size int64) error {
	f, err := c.fs.OpenReadWrite(path)
	if err != nil {
		f, err = c.fs.Create(path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for off := int64(0); off < size; off += zeroBytes {
		if _, err := f.WriteAt(zeros[:min(zeroBytes, size-off)], off); err != nil {
			return err
		}
	}
	return f.Sync()
}

// giveUpReserve removes the reserve, giving its space to the write that
// follows, and reports whether there was one to give.
func (c *File[K, E]) giveUpReserve() bool {
	return c.fs.Remove(c.reservePath()) == nil
}
