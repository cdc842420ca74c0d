//go:build linux

package ring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring ABI, from include/uapi/linux/io_uring.h. Frozen by the kernel.

// sqe is struct io_uring_sqe (64 bytes). Every field that can hold an
// address is an integer: the SQE array is kernel memory, and a Go pointer
// stored there would be invisible to the GC and a hazard to its write barrier.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32 // rw_flags, fsync_flags, ...
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad2        uint64
}

// cqe is struct io_uring_cqe (16 bytes, no IORING_SETUP_CQE32).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// iovec is struct iovec, with the base as an integer for the reason above.
type iovec struct {
	base uintptr
	len  uintptr
}

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// uringParams is struct io_uring_params (120 bytes).
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

const (
	sqeSize    = 64
	cqeSize    = 16
	paramsSize = 120

	opNop    = 0  // IORING_OP_NOP
	opWritev = 2  // IORING_OP_WRITEV
	opFsync  = 3  // IORING_OP_FSYNC
	opRead   = 22 // IORING_OP_READ
	opWrite  = 23 // IORING_OP_WRITE

	iosqeIOLink   = 1 << 2 // IOSQE_IO_LINK
	fsyncDatasync = 1 << 0 // IORING_FSYNC_DATASYNC

	setupCQSize = 1 << 3 // IORING_SETUP_CQSIZE

	featSingleMmap = 1 << 0 // IORING_FEAT_SINGLE_MMAP
	featNoDrop     = 1 << 1 // IORING_FEAT_NODROP
	featRWCurPos   = 1 << 3 // IORING_FEAT_RW_CUR_POS: came with OP_READ/OP_WRITE (5.6)

	sqCQOverflow = 1 << 1 // IORING_SQ_CQ_OVERFLOW

	enterGetEvents = 1 << 0 // IORING_ENTER_GETEVENTS

	offSQRing = 0          // IORING_OFF_SQ_RING
	offCQRing = 0x8000000  // IORING_OFF_CQ_RING
	offSQEs   = 0x10000000 // IORING_OFF_SQES
)

// Compile-time layout checks: a wrong size is a build error, not a corrupt ring.
var (
	_ [sqeSize - unsafe.Sizeof(sqe{})]byte
	_ [unsafe.Sizeof(sqe{}) - sqeSize]byte
	_ [cqeSize - unsafe.Sizeof(cqe{})]byte
	_ [unsafe.Sizeof(cqe{}) - cqeSize]byte
	_ [paramsSize - unsafe.Sizeof(uringParams{})]byte
	_ [unsafe.Sizeof(uringParams{}) - paramsSize]byte
)

// uringSetup is io_uring_setup(2); a variable so a test can make the kernel
// "refuse" it.
var uringSetup = rawSetup

func rawSetup(entries uint32, p *uringParams) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

func rawEnter(fd int, toSubmit, minComplete, flags uint32) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd),
		uintptr(toSubmit), uintptr(minComplete), uintptr(flags), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
