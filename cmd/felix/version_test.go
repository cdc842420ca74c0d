package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionNamesTheVersionAndTheCommit(t *testing.T) {
	stamp := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		version, stamped string
		info             *debug.BuildInfo
		want             []string
	}{
		{"v0.9.0-12-gabc", "abc123def456", stamp, []string{"felix v0.9.0-12-gabc (commit abc123def456, go1.26.8, "}},
		{"dev", "", stamp, []string{"felix dev (commit 0123456789ab, modified, go1.26.8, "}},
		{"dev", "", nil, []string{"felix dev (commit unknown, go"}},
	} {
		if got := versionLine(c.version, c.stamped, c.info); !strings.HasPrefix(got, c.want[0]) {
			t.Errorf("versionLine(%q, %q) = %q, want it to start %q", c.version, c.stamped, got, c.want[0])
		}
	}
	out, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "felix "+version+" (commit ")
}
