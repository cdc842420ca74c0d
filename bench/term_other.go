//go:build !linux && !windows && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package bench

import "os"

// isTerminal falls back to a stat of the descriptor: a character device is
// taken for a terminal.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
