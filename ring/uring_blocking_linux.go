//go:build linux

package ring

import (
	"io"
	"runtime"

	"golang.org/x/sys/unix"
)

// The io_uring driver's waiting path (Blocking): see "The waiting path" in
// doc.go for which operation goes where and the measurements behind it.

// WriteAt writes p with pwrite on the caller's thread. A buffered write to
// ext4 cannot complete without blocking, so the ring would hand it to an
// io-wq worker and wake the caller afterwards; the write itself is a copy
// into the page cache that costs less than either wake-up.
func (d *uringDriver) WriteAt(fd int, p []byte, off int64) (int, error) {
	if d.hooks.ringWait {
		return writeAtSubmit(d, fd, p, off)
	}
	if d.closing.Load() {
		return 0, ErrClosed
	}
	return pwriteAll(fd, p, off)
}

// ReadAt reads with pread on the caller's thread: a cached read is a copy
// that the ring would also do inline, behind one more system call and the
// SQE and CQE round trip; an uncached one waits for the disk either way.
func (d *uringDriver) ReadAt(fd int, p []byte, off int64) (int, error) {
	if d.hooks.ringWait {
		return readAtSubmit(d, fd, p, off)
	}
	if d.closing.Load() {
		return 0, ErrClosed
	}
	return preadAll(fd, p, off)
}

// Fdatasync runs fdatasync on the caller's thread while at most directMax
// waiting durability operations of this driver are in progress, this one
// included, and through the ring (a submission and a wait) past that.
func (d *uringDriver) Fdatasync(fd int) error {
	if d.closing.Load() {
		return ErrClosed
	}
	direct := d.enterDurable()
	defer d.durable.Add(-1)
	if !direct {
		return fdatasyncSubmit(d, fd)
	}
	return fdatasyncRetry(fd)
}

// WriteAtSync writes p and syncs with pwrite and fdatasync on the caller's
// thread under the same limit as Fdatasync, and past it as a write linked
// to an fdatasync through the ring.
func (d *uringDriver) WriteAtSync(fd int, p []byte, off int64) (int, error) {
	if d.closing.Load() {
		return 0, ErrClosed
	}
	direct := d.enterDurable()
	defer d.durable.Add(-1)
	if !direct {
		return writeAtSyncSubmit(d, fd, p, off)
	}
	n, err := pwriteAll(fd, p, off)
	if err != nil {
		return n, err
	}
	return n, fdatasyncRetry(fd)
}

// enterDurable counts a waiting durability operation in and reports
// whether it is to run on the caller's thread: only while at most
// directMax are in progress, this one included. See "The waiting path" in
// the package doc.
func (d *uringDriver) enterDurable() (direct bool) {
	return d.durable.Add(1) <= d.directMax
}

// directDurableMax is GOMAXPROCS: a durability operation on its caller's
// thread holds a P for as long as the disk takes (the runtime takes it
// back only after 20us or more, and only when other goroutines wait for
// it), so once there is one per P the next would wait for a processor, and
// goes through the ring instead, whose waiters give theirs back at once.
// The ringWait test hook makes it 0.
func directDurableMax(h *hooks) int32 {
	if h.ringWait {
		return 0
	}
	return int32(runtime.GOMAXPROCS(0))
}

// pwriteAll is WriteAt with system calls: all of p, going on after short
// writes, io.ErrShortWrite when the file takes nothing.
func pwriteAll(fd int, p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		at := off + int64(total)
		n, err := unix.Pwrite(fd, chunk(p, total), at)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return total, errnoError(OpWrite, at, err)
		case n == 0:
			return total, io.ErrShortWrite
		}
		total += n
	}
	return total, nil
}

// preadAll is ReadAt with system calls: len(p) bytes, or fewer with an
// error, io.EOF at the end of the file.
func preadAll(fd int, p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		at := off + int64(total)
		n, err := unix.Pread(fd, chunk(p, total), at)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return total, errnoError(OpRead, at, err)
		case n == 0:
			return total, io.EOF
		}
		total += n
	}
	return total, nil
}

func fdatasyncRetry(fd int) error {
	for {
		err := fdatasync(fd)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return errnoError(OpFdatasync, 0, err)
		}
		return nil
	}
}
