package main

import "testing"

// configOf is the serveConfig felix serve would run with these flags and no
// environment or config file.
func configOf(t *testing.T, flags map[string]string) serveConfig {
	t.Helper()
	st := serveSettings()
	if err := st.resolve("", noEnv, flags); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseServeConfig(st)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
