//go:build !linux && !darwin && !windows

package bench

// On other systems only what the Go runtime knows is described.
func describePlatform(*Machine) {}

func describeDisk(*Machine) {}
