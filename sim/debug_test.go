package sim

import (
	"os"
	"strings"
	"testing"
)

// TestDumpTrace writes a seed's trace to FELIX_SIM_TRACE (skipped unless
// both it and FELIX_SIM_SEED are set): for reading a failure whole.
func TestDumpTrace(t *testing.T) {
	path, seed := os.Getenv("FELIX_SIM_TRACE"), os.Getenv("FELIX_SIM_SEED")
	if path == "" || seed == "" {
		t.Skip("FELIX_SIM_TRACE and FELIX_SIM_SEED unset")
	}
	var lines []string
	res := runWith(t, configFromEnv(t), func(w *World) { lines = w.trace.lines })
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d lines, hash %016x, failed %v", len(lines), res.Hash, res.Failed())
}
