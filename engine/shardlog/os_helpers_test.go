package shardlog

import (
	"testing"

	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// forEachDriver runs fn over the real file system on every IO path this
// machine offers: io_uring where the kernel allows it, and the portable
// worker pool everywhere.
func forEachDriver(t *testing.T, fn func(t *testing.T, fs vfs.FS, dir string)) {
	for _, mode := range []ring.Mode{ring.ModeUring, ring.ModePortable} {
		d, err := ring.Open(ring.Config{Mode: mode})
		if err != nil {
			t.Logf("%v: %v", mode, err)
			continue
		}
		t.Run(string(d.Kind()), func(t *testing.T) {
			defer d.Close()
			fn(t, vfs.NewOS(d), t.TempDir())
		})
	}
}
