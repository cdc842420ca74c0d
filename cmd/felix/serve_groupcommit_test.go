package main

import "testing"

// --group-commit (FELIX_GROUP_COMMIT) turns on the broker's shared flush
// scheduler; off by default; anything but on or off is refused.
func TestGroupCommitIsASetting(t *testing.T) {
	for env, want := range map[string]bool{"": false, "on": true, "off": false, "true": true} {
		st := serveSettings()
		lookup := func(k string) (string, bool) { return env, k == "FELIX_GROUP_COMMIT" && env != "" }
		if err := st.resolve("", lookup, nil); err != nil {
			t.Fatal(err)
		}
		cfg, err := parseServeConfig(st)
		if err != nil || cfg.groupCommit != want || brokerConfig(cfg, nil).GroupCommit != want {
			t.Fatalf("FELIX_GROUP_COMMIT=%q: %v %v, want %v", env, cfg.groupCommit, err, want)
		}
	}
	st := serveSettings()
	st.resolve("", func(string) (string, bool) { return "", false }, map[string]string{"group-commit": "sometimes"})
	if _, err := parseServeConfig(st); err == nil {
		t.Fatal("--group-commit sometimes was accepted")
	}
}
