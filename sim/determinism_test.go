package sim

import (
	"os"
	"strconv"
	"testing"
)

// determinismSeeds are the seeds whose replay must give the same trace.
var determinismSeeds = []uint64{1, 2, 3, 5, 8}

// TestASeedReplaysToTheSameTrace runs each seed twice and compares the
// event traces' hashes; on a difference it shows where they part.
func TestASeedReplaysToTheSameTrace(t *testing.T) {
	for _, seed := range determinismSeeds {
		a, ha := traceOf(t, seed)
		b, hb := traceOf(t, seed)
		if ha != hb {
			t.Errorf("seed %d: two runs, hashes %016x and %016x:\n%s", seed, ha, hb, firstDifference(a, b))
		}
	}
}

// TestReplayDivergence measures how often a seed's replay differs
// (FELIX_SIM_REPLAYS runs of each of FELIX_SIM_SEEDS seeds; skipped
// unless FELIX_SIM_REPLAYS is set), for docs/reliability.md.
func TestReplayDivergence(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("FELIX_SIM_REPLAYS"))
	if runs < 2 {
		t.Skip("FELIX_SIM_REPLAYS unset")
	}
	first, count := seedsFromEnv(t)
	differ := 0
	for seed := first; seed < first+uint64(count); seed++ {
		base, h := traceOf(t, seed)
		for range runs - 1 {
			other, h2 := traceOf(t, seed)
			if h2 != h {
				differ++
				t.Logf("seed %d differs:\n%s", seed, firstDifference(base, other))
			}
		}
	}
	t.Logf("%d replays of %d seeds: %d differed from the seed's first run", count*(runs-1), count, differ)
}

func traceOf(t *testing.T, seed uint64) ([]string, uint64) {
	var lines []string
	res := runWith(t, ConfigOf(seed), func(w *World) { lines = w.trace.lines })
	return lines, res.Hash
}

// firstDifference shows the lines around where two traces first part.
func firstDifference(a, b []string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	out := ""
	for k := max(i-8, 0); k < i; k++ {
		out += "  = " + a[k] + "\n"
	}
	for k := i; k < i+4; k++ {
		if k < len(a) {
			out += "  1 " + a[k] + "\n"
		}
		if k < len(b) {
			out += "  2 " + b[k] + "\n"
		}
	}
	return out
}
