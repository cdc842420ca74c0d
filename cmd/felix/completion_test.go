package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/alecthomas/kong"
)

func TestCompletionOffersTheCommandsAndFlagsOfWhereTheWordsReached(t *testing.T) {
	var c cli
	parser, err := newParser(&c, kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"str"}, []string{"stream"}},
		{[]string{"stream", ""}, []string{"create", "delete", "describe", "list"}},
		{[]string{"stream", "create", "--sh"}, []string{"--shards"}},
		{[]string{"--help", "coun"}, []string{"counter"}},
		{[]string{"cache", "create", "--repl"}, []string{"--replication-factor"}},
		{[]string{"__comp"}, nil}, // hidden
	} {
		if got := complete(parser.Model.Node, tc.words); !slices.Equal(got, tc.want) {
			t.Errorf("completing %q: %q, want %q", tc.words, got, tc.want)
		}
	}
}

// The bash script is one bash takes, and it asks __complete.
func TestTheBashCompletionScriptParses(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	path := filepath.Join(t.TempDir(), "felix.bash")
	if err := os.WriteFile(path, []byte(completionScripts["bash"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	out, err := runCLI(t, "completion", "bash")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "felix __complete --", "complete -o default -F _felix felix")
}
