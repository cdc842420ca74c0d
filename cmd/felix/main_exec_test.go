package main

import (
	"io"
	"os"
	"testing"
	"time"
)

// runMainEnv, set to 1, makes the test binary felix itself: TestMain runs
// main() with the binary's arguments in place of the tests, so that a test
// starts real felix processes (serve_processes_test.go) without a build
// step, re-executing os.Args[0].
const runMainEnv = "FELIX_TEST_RUN_MAIN"

// exitWithStdinEnv, set to 1 beside runMainEnv, stops the process once its
// standard input ends. The test holds the other end of that pipe, and the
// kernel closes it when the test binary dies however it dies (a -timeout
// panic, a kill), so a broker started by a test never outlives it.
const exitWithStdinEnv = "FELIX_TEST_EXIT_WITH_STDIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		if os.Getenv(exitWithStdinEnv) == "1" {
			go exitWithStdin()
		}
		os.Args[0] = "felix"
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// exitWithStdin waits for the end of standard input, then interrupts the
// process (felix serve stops gracefully on it) and exits if it has not
// within 30 s: with its parent gone, no one is left to wait for it.
func exitWithStdin() {
	io.Copy(io.Discard, os.Stdin)
	if p, err := os.FindProcess(os.Getpid()); err != nil || p.Signal(os.Interrupt) != nil {
		os.Exit(3)
	}
	time.AfterFunc(30*time.Second, func() { os.Exit(3) })
}
