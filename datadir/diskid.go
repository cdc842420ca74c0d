package datadir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DiskIDFile holds the data directory's disk id.
const DiskIDFile = "disk.id"

// diskIDBytes is a disk id's size: 128 random bits, never drawn twice.
const diskIDBytes = 16

// ErrDiskIDDamaged is a disk id file that does not hold a disk id.
var ErrDiskIDDamaged = errors.New("felix/datadir: disk id damaged")

// DiskID returns the data directory's disk id, drawing and writing one
// (durably, before it is returned) the first time the directory is opened
// without one: at its creation, or the first start of a directory an older
// release made. A wiped or replaced disk has no file, so it gets a new id:
// to the cluster it is a new replica that holds nothing, never the old one.
// Call it with the directory's lock held.
func DiskID(dir string) (string, error) {
	path := filepath.Join(dir, DiskIDFile)
	b, err := os.ReadFile(path)
	if err == nil {
		return parseDiskID(path, b)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("felix/datadir: %w", err)
	}
	id, err := newDiskID()
	if err != nil {
		return "", err
	}
	if err := WriteFile(path, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("felix/datadir: writing %s: %w", path, err)
	}
	return id, nil
}

func newDiskID() (string, error) {
	var b [diskIDBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("felix/datadir: drawing a disk id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// parseDiskID accepts exactly what newDiskID writes. A damaged file is
// refused, not replaced: replacing it would make a disk that holds data look
// new, and the data was never checked.
func parseDiskID(path string, b []byte) (string, error) {
	id := strings.TrimSpace(string(b))
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw) != diskIDBytes {
		return "", fmt.Errorf("%w: %s holds %q, not %d hex bytes", ErrDiskIDDamaged, path, id, diskIDBytes)
	}
	return id, nil
}
