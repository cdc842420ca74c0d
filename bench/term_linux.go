package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal asks the tty driver, as golang.org/x/term does: a character
// device such as /dev/null is not a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
