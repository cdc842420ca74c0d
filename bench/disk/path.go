package disk

import "github.com/felixbroker/felix/ring"

// PathRaw is the Params.IOPath (and name suffix) of the bare measurements;
// those through a driver carry the driver's ring.Kind instead.
const PathRaw = "raw"

// syncer writes a buffer and makes it durable: the one operation every
// fsync measurement repeats. Owned by one goroutine; allocates nothing.
type syncer interface {
	writeSync(b []byte, off int64) error
	path() string
}

// rawSyncer is the bare baseline: pwrite and fdatasync straight through
// golang.org/x/sys/unix (os.File on systems without it).
type rawSyncer struct {
	file *dataFile
}

func (s rawSyncer) writeSync(b []byte, off int64) error {
	if err := writeAt(s.file.f, b, off); err != nil {
		return err
	}
	return datasync(s.file.f)
}

func (rawSyncer) path() string { return PathRaw }

// ringSyncer goes through a ring.Driver: one Submit of a write linked to an
// fdatasync, as the storage engine's committer does.
type ringSyncer struct {
	d  ring.Driver
	fd int
}

func newRingSyncer(d ring.Driver, file *dataFile) ringSyncer {
	return ringSyncer{d: d, fd: int(file.f.Fd())}
}

func (s ringSyncer) writeSync(b []byte, off int64) error {
	_, err := ring.WriteAtSync(s.d, s.fd, b, off)
	return err
}

func (s ringSyncer) path() string { return string(s.d.Kind()) }
