// promlint (client_golang's testutil/promlint) checks the exposition the
// way Prometheus's own tooling would.

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
