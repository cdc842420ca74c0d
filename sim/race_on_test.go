//go:build race

package sim

// raceEnabled: under -race a run costs about eight times as much, and the
// race detector's own scheduling makes a replay differ more often; the
// tests that read it run again without -race in make test
// (scripts/race-skipped-tests).
const raceEnabled = true
