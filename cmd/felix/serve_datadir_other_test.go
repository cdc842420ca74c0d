//go:build !linux

package main

import "testing"

// readOnlyMount is Linux's only; elsewhere a root test skips.
func readOnlyMount(*testing.T, string) (string, bool) { return "", false }
