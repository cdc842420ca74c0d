package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

var updateExample = flag.Bool("update-example", false, "rewrite deploy/felix.toml from the settings")

const exampleConfigPath = "../../deploy/felix.toml"

// The example config names every setting at its default, and felix serve
// takes it as it is.
func TestTheExampleConfigNamesEverySettingAndLoads(t *testing.T) {
	want := exampleConfig()
	if *updateExample {
		if err := os.WriteFile(exampleConfigPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is not what the settings make (a setting added or changed?): regenerate it with go test ./cmd/felix -run ExampleConfig -update-example", exampleConfigPath)
	}
	s := serveSettings()
	if err := s.loadFile(exampleConfigPath); err != nil {
		t.Fatalf("felix serve refuses its own example config: %v", err)
	}
	for _, st := range s.list {
		if st.source != "file "+exampleConfigPath || st.value != st.def {
			t.Errorf("setting %s: %q from %s, want its default %q from the file", st.key, st.value, st.source, st.def)
		}
	}
}

// The systemd unit's command line is one felix takes.
func TestTheSystemdUnitRunsACommandFelixTakes(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join("..", "..", "deploy", "felix.service"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+) (.*)$`).FindSubmatch(unit)
	if m == nil {
		t.Fatal("deploy/felix.service has no ExecStart line")
	}
	var c cli
	parser, err := newParser(&c, kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	const installed = "/etc/felix/felix.toml" // where the unit expects deploy/felix.toml
	args := strings.Fields(strings.ReplaceAll(string(m[2]), installed, exampleConfigPath))
	if _, err := parser.Parse(args); err != nil {
		t.Fatalf("ExecStart=%s %s: %v", m[1], m[2], err)
	}
	if abs, _ := filepath.Abs(exampleConfigPath); c.Serve.Config != abs {
		t.Errorf("the unit runs felix serve with --config %q, want %s", c.Serve.Config, installed)
	}
}

// A config file's unknown key is refused with the setting it was likely
// meant to be.
func TestAnUnknownConfigKeyIsRefusedWithTheLikelyOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "felix.toml")
	if err := os.WriteFile(path, []byte("segmnt-bytes = 1048576\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := serveSettings().loadFile(path)
	if err == nil || !strings.Contains(err.Error(), `unknown key "segmnt-bytes" (did you mean "segment-bytes"?)`) {
		t.Fatalf("loading a file with segmnt-bytes: %v", err)
	}
	if got := didYouMean("zzzz", serveSettings().keys()); got != "" {
		t.Errorf("a key like no setting suggested %q", got)
	}
}
