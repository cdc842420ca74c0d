//go:build linux

package ring

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// uringDisabledPath is the sysctl that turns io_uring off; a variable so a
// test can point it at a file of its own.
var uringDisabledPath = "/proc/sys/kernel/io_uring_disabled"

// refusal wraps ErrUnavailable with why the kernel refused io_uring_setup,
// in words an operator can act on.
func refusal(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("%w: io_uring_setup: %v", ErrUnavailable, err)
	}
	return fmt.Errorf("%w: io_uring_setup: %s (%v): %s",
		ErrUnavailable, unix.ErrnoName(errno), errno, explainErrno(errno))
}

func explainErrno(errno syscall.Errno) string {
	switch errno {
	case unix.ENOSYS:
		return "the kernel has no io_uring (older than 5.1, or built without CONFIG_IO_URING)"
	case unix.EPERM, unix.EACCES:
		return explainDenied()
	case unix.EINVAL:
		return "the kernel rejected the setup parameters: it lacks an io_uring feature Felix asks for"
	case unix.ENOMEM:
		return "not enough lockable memory for the rings (kernels before 5.12 charge them to RLIMIT_MEMLOCK)"
	case unix.EMFILE, unix.ENFILE:
		return "out of file descriptors"
	}
	return "unexpected error"
}

// explainDenied tells the sysctl apart from a seccomp filter or LSM.
func explainDenied() string {
	b, err := os.ReadFile(uringDisabledPath)
	switch strings.TrimSpace(string(b)) {
	case "2":
		return "kernel.io_uring_disabled=2 forbids io_uring to every process"
	case "1":
		return "kernel.io_uring_disabled=1 limits io_uring to CAP_SYS_ADMIN and the group in kernel.io_uring_group"
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("denied (and %s unreadable: %v); likely a seccomp filter or security module", uringDisabledPath, err)
	}
	return "denied by a seccomp filter or security module (container runtimes commonly block io_uring)"
}

// missingFeatures names the IORING_FEAT_ bits Felix needs that the kernel lacks.
func missingFeatures(features uint32) string {
	var missing []string
	if features&featNoDrop == 0 {
		missing = append(missing, "IORING_FEAT_NODROP (5.5)")
	}
	if features&featRWCurPos == 0 {
		missing = append(missing, "IORING_FEAT_RW_CUR_POS, i.e. IORING_OP_READ/WRITE (5.6)")
	}
	return strings.Join(missing, ", ")
}
