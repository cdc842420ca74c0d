//go:build race

package replica

// raceEnabled: the race detector allocates on its own account (the tests
// that skip under it run again without it: scripts/race-skipped-tests).
const raceEnabled = true
