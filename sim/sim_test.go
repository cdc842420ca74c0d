package sim

import (
	"os"
	"strconv"
	"testing"
)

// Seeds TestSimulation runs when FELIX_SIM_SEEDS does not say: 200 (about
// 13 s on a 2-core machine, a third of them with caches), or 10 under -race, where make test runs it
// again without -race for the 200 (scripts/race-skipped-tests lists every
// test that reads raceEnabled).
const (
	seedsDefault     = 200
	seedsDefaultRace = 10
)

// TestSimulation runs FELIX_SIM_SEEDS seeds from FELIX_SIM_FIRST (default
// 1), or the one seed FELIX_SIM_SEED, and fails on any run that breaks a
// promise, with its report and the command that replays it.
func TestSimulation(t *testing.T) {
	first, count := seedsFromEnv(t)
	if raceEnabled && os.Getenv("FELIX_SIM_SEEDS") == "" && os.Getenv("FELIX_SIM_SEED") == "" {
		count = seedsDefaultRace
	}
	var total figures
	for seed := first; seed < first+uint64(count); seed++ {
		res := Run(t, ConfigOf(seed))
		total.add(res)
		if res.Failed() {
			t.Errorf("seed %d broke a promise:\n%s", seed, res.Report())
		}
		if count == 1 {
			t.Logf("seed %d: hash %016x, %d events, %+v, tolerated %v", seed, res.Hash, res.Lines, res.Stats, res.Tolerated)
		}
	}
	t.Log(total.String())
}

// seedsFromEnv is the first seed and the count of seeds to run.
func seedsFromEnv(t *testing.T) (uint64, int) {
	t.Helper()
	first, count := uint64(1), seedsDefault
	if s := os.Getenv("FELIX_SIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FELIX_SIM_SEED=%q: %v", s, err)
		}
		first, count = seed, 1
	} else {
		if s := os.Getenv("FELIX_SIM_SEEDS"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("FELIX_SIM_SEEDS=%q: %v", s, err)
			}
			count = n
		}
		if s := os.Getenv("FELIX_SIM_FIRST"); s != "" {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("FELIX_SIM_FIRST=%q: %v", s, err)
			}
			first = n
		}
	}
	return first, count
}

// configFromEnv is the configuration of FELIX_SIM_SEED.
func configFromEnv(t *testing.T) Config {
	first, _ := seedsFromEnv(t)
	return ConfigOf(first)
}
