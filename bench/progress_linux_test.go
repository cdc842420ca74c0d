package bench

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens the master side of a new pseudo-terminal: a terminal that
// needs no controlling tty, so the test runs the same under CI.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestProgressOnATerminalUnlessCI(t *testing.T) {
	pty := openPTY(t)
	t.Setenv("CI", "")
	if !ProgressEnabled(pty) {
		t.Fatal("progress disabled on a terminal")
	}
	t.Setenv("CI", "false")
	if !ProgressEnabled(pty) {
		t.Error("CI=false disabled progress")
	}
	t.Setenv("CI", "true")
	if ProgressEnabled(pty) {
		t.Error("progress enabled on a terminal with CI=true")
	}
}

// A character device is not necessarily a terminal: /dev/null is one.
func TestDevNullIsNotATerminal(t *testing.T) {
	t.Setenv("CI", "")
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ProgressEnabled(f) {
		t.Error("progress enabled on /dev/null")
	}
}
