//go:build unix

package datadir

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestHoldTheLockForTheParent is not a test: the parent re-runs the test
// binary with FELIX_DATADIR_HOLD set to have another process hold a lock.
func TestHoldTheLockForTheParent(t *testing.T) {
	dir := os.Getenv("FELIX_DATADIR_HOLD")
	if dir == "" {
		t.Skip("a helper process for TestALockHeldByAKilledProcessIsFreed")
	}
	if _, err := Acquire(dir); err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("held\n")
	select {} // until killed
}

func TestALockHeldByAKilledProcessIsFreed(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldTheLockForTheParent$")
	cmd.Env = append(os.Environ(), "FELIX_DATADIR_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("the helper said %q, %v", line, err)
	}
	_, err = Acquire(dir)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Pid != cmd.Process.Pid {
		t.Fatalf("while the helper (pid %d) holds it: %v", cmd.Process.Pid, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // reaped: the kernel has closed its files, and with them the lock
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after kill -9 the lock is still refused: %v", err)
	}
	l.Release()
}
