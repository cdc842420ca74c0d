package observe

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"
)

// Type is a Prometheus metric type.
type Type string

// The types a Registry writes.
const (
	TypeCounter   Type = "counter"
	TypeGauge     Type = "gauge"
	TypeHistogram Type = "histogram"
)

// family is what # HELP and # TYPE say about one metric family.
type family struct {
	typ  Type
	help string
}

// Sample is one series of a collected family: its labels, rendered as
// `name="value",...` without braces (empty for none), and its value.
type Sample struct {
	Labels string
	Value  float64
}

// collector writes a family whose series are only known at scrape time.
type collector struct {
	name    string
	collect func(emit func(Sample))
}

// Registry is a set of metrics with their families' type and help.
type Registry struct {
	set *metrics.Set

	mu         sync.Mutex
	families   map[string]family
	collectors []collector
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{set: metrics.NewSet(), families: map[string]family{}}
}

var familyName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// declare records a family's type and help. Registering one family twice
// with a different type or help, or a malformed name, is a bug.
func (r *Registry) declare(series string, typ Type, help string) string {
	name, _, _ := strings.Cut(series, "{")
	if !familyName.MatchString(name) || help == "" {
		panic(fmt.Sprintf("felix/observe: metric %q: bad name or no help (bug)", series))
	}
	if typ == TypeCounter && !strings.HasSuffix(name, "_total") {
		panic(fmt.Sprintf("felix/observe: counter %q must end in _total (bug)", name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.families[name]; ok && f != (family{typ, help}) {
		panic(fmt.Sprintf("felix/observe: family %q declared twice, differently (bug)", name))
	}
	r.families[name] = family{typ, help}
	return name
}

// Counter registers a counter series (labels allowed: `name{k="v"}`) that
// the caller increments.
func (r *Registry) Counter(series, help string) *metrics.Counter {
	r.declare(series, TypeCounter, help)
	return r.set.NewCounter(series)
}

// CounterFunc registers a counter series read from f at scrape time; f
// must never go down.
func (r *Registry) CounterFunc(series, help string, f func() float64) {
	r.declare(series, TypeCounter, help)
	r.set.NewGauge(series, f) // the value is read like a gauge's; the TYPE line says counter
}

// GaugeFunc registers a gauge series read from f at scrape time.
func (r *Registry) GaugeFunc(series, help string, f func() float64) {
	r.declare(series, TypeGauge, help)
	r.set.NewGauge(series, f)
}

// Histogram registers a histogram series with the given bucket upper
// bounds (ascending).
func (r *Registry) Histogram(series, help string, bounds []float64) *metrics.PrometheusHistogram {
	r.declare(series, TypeHistogram, help)
	return r.set.NewPrometheusHistogramExt(series, bounds)
}

// Collect registers a family whose series are listed by collect at each
// scrape (a gauge per consumer group, say). collect runs with no registry
// lock held.
func (r *Registry) Collect(name string, typ Type, help string, collect func(emit func(Sample))) {
	r.declare(name, typ, help)
	r.mu.Lock()
	r.collectors = append(r.collectors, collector{name: name, collect: collect})
	r.mu.Unlock()
}

// Families lists the registered family names, sorted.
func (r *Registry) Families() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.families))
	for name := range r.families {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// WritePrometheus writes every series in the Prometheus text format
// (version 0.0.4), each family headed by its # HELP and # TYPE lines.
func (r *Registry) WritePrometheus(w io.Writer) error {
	var body bytes.Buffer
	r.set.WritePrometheus(&body)
	r.mu.Lock()
	families := make(map[string]family, len(r.families))
	for k, v := range r.families {
		families[k] = v
	}
	collectors := append([]collector(nil), r.collectors...)
	r.mu.Unlock()
	var out bytes.Buffer
	annotate(&out, body.Bytes(), families)
	for _, c := range collectors {
		writeCollected(&out, c, families[c.name])
	}
	_, err := w.Write(out.Bytes())
	return err
}

// annotate copies the set's exposition, inserting the metadata lines
// before the first series of each family. The set writes each family's
// series together (it sorts by family name).
func annotate(out *bytes.Buffer, body []byte, families map[string]family) {
	last := ""
	for _, line := range bytes.SplitAfter(body, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		name := familyOf(string(line), families)
		if name != last {
			if f, ok := families[name]; ok {
				writeMeta(out, name, f)
			}
			last = name
		}
		out.Write(line)
	}
}

// familyOf finds the family a series line belongs to: its name, or for a
// histogram's _bucket, _sum and _count lines the histogram's name.
func familyOf(line string, families map[string]family) string {
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		end = len(line)
	}
	name := line[:end]
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base].typ == TypeHistogram {
			return base
		}
	}
	return name
}

func writeMeta(out *bytes.Buffer, name string, f family) {
	help := strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(f.help)
	fmt.Fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, f.typ)
}

func writeCollected(out *bytes.Buffer, c collector, f family) {
	var samples []Sample
	c.collect(func(s Sample) { samples = append(samples, s) })
	writeMeta(out, c.name, f)
	for _, s := range samples {
		if s.Labels == "" {
			fmt.Fprintf(out, "%s %g\n", c.name, s.Value)
		} else {
			fmt.Fprintf(out, "%s{%s} %g\n", c.name, s.Labels, s.Value)
		}
	}
}

// Label renders one label pair for a Sample or a series name, escaping the
// value as the text format requires.
func Label(name, value string) string {
	return name + `="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(value) + `"`
}
