//go:build promlint

// This test needs github.com/prometheus/client_golang's promlint, whose
// dependencies (client_model, common, goautoneg, protobuf) have no go.sum
// lines in this module yet: run it with `go test -tags promlint` once they
// are added (go mod download github.com/prometheus/common ...).

package observe

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// promlint finds nothing to say about the broker's exposition.
func TestPromlintAcceptsTheExposition(t *testing.T) {
	problems, err := promlint.New(strings.NewReader(scrapeBroker(t))).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
