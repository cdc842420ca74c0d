//go:build race

package vfs

// raceEnabled: sync.Pool drops a quarter of its Puts under the race
// detector, so allocation counts mean nothing there.
const raceEnabled = true
