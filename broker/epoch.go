package broker

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/felixbroker/felix/datadir"
)

// epochFile holds the broker's incarnation count in its data directory.
const epochFile = "producer.epoch"

// nextEpoch returns this incarnation's producer epoch: one more than the
// last, persisted before the broker serves anyone, so two incarnations of a
// broker with a data directory never share an epoch (the wire carries 32
// bits of it). Without a data directory it draws a random 32-bit one.
func nextEpoch(dataDir string) (uint64, error) {
	if dataDir == "" {
		var b [4]byte
		for {
			if _, err := rand.Read(b[:]); err != nil {
				return 0, err
			}
			if e := binary.LittleEndian.Uint32(b[:]); e != 0 {
				return uint64(e), nil
			}
		}
	}
	path := filepath.Join(dataDir, epochFile)
	last := uint64(0)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if last, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32); err != nil {
			return 0, fmt.Errorf("%s is damaged: %w", path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return 0, err
	}
	next := last%(1<<32-1) + 1
	if err := datadir.WriteFile(path, []byte(strconv.FormatUint(next, 10)+"\n")); err != nil {
		return 0, err
	}
	return next, nil
}
