package main

import (
	"fmt"
	"strconv"
	"strings"
)

// exampleConfig is deploy/felix.toml: every setting of felix serve with
// its default and what it does, in --print-config's order, so that an
// operator's file starts from all of them (the test keeps the file equal
// to it).
func exampleConfig() string {
	var b strings.Builder
	b.WriteString(`# felix serve's settings, each at its default: felix serve --config felix.toml.
# A flag or an environment variable (named above each) outranks the file;
# felix serve --print-config shows where each value came from. Unknown keys
# are refused. Per-tenant quotas go in a [quotas] table (docs/security.md).
# Generated from cmd/felix/serve_settings.go: go test ./cmd/felix -run ExampleConfig -update-example
`)
	for _, st := range serveSettings().list {
		fmt.Fprintf(&b, "\n# %s (%s)\n%s = %s\n", st.help, strings.Join(st.envs, ", "), st.key, tomlValue(st.def))
	}
	return b.String()
}

// tomlValue writes a default as TOML: a whole number bare, text quoted.
func tomlValue(v string) string {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return v
	}
	return strconv.Quote(v)
}
