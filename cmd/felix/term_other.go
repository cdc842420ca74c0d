//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "os"

// isTerminal is false where there is no termios: logs are JSON there unless
// --log-format text is given.
func isTerminal(*os.File) bool { return false }
