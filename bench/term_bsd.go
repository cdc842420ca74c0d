//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal asks the tty driver, as golang.org/x/term does.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TIOCGETA)
	return err == nil
}
