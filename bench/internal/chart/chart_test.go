package chart

import (
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// wellFormed fails the test unless svg parses as XML to the end.
func wellFormed(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v\n%s", err, svg)
		}
	}
}

func uniformSeries(name string, scale time.Duration) Series {
	s := Series{Name: name, Count: 1000, Label: func(d time.Duration) string { return d.String() }}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		s.Points = append(s.Points, Point{q, time.Duration(q*1000+1) * scale})
	}
	s.Marks = []Mark{{"p99", Point{0.99, 991 * scale}}, {"max", Point{1, 1001 * scale}}}
	return s
}

func TestLatencyChartCarriesItsNumbers(t *testing.T) {
	svg := Latency("fsync <raw> & ring", "size=4096 io=io_uring", []Series{uniformSeries("ring", time.Microsecond), uniformSeries("raw", 100*time.Nanosecond)})
	wellFormed(t, svg)
	for _, want := range []string{
		"fsync &lt;raw&gt; &amp; ring", // escaped title
		"size=4096 io=io_uring",
		"p99 991µs", "max 1.001ms", // the result's marks, as text
		"raw max 100.1µs", // a baseline's mark, as a tooltip
		">99.9%<", ">90%<", ">0%<", ">1ms<", ">100ns<",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if strings.Contains(svg, "http") {
		t.Error("chart refers to a URL")
	}
}

func TestLatencyAxesSpanTheData(t *testing.T) {
	ax := newLatencyAxes([]Series{uniformSeries("a", time.Microsecond)})
	if ax.xDecades != 3 || ax.yLow != 3 || ax.yHigh != 7 {
		t.Fatalf("axes %+v, want 3 x decades and y from 1us (1e3) to 10ms (1e7)", ax)
	}
	if x0, xmax := ax.x(0, 1000), ax.x(1, 1000); x0 != latLeft || math.Abs(xmax-(latWidth-latRight)) > 1e-9 {
		t.Errorf("x spans %v..%v, want %v..%v", x0, xmax, latLeft, latWidth-latRight)
	}
	if y := ax.y(time.Microsecond); y != latHeight-latBottom {
		t.Errorf("1us at y=%v, want the bottom %v", y, latHeight-latBottom)
	}
	if y := ax.y(0); y != latHeight-latBottom {
		t.Errorf("zero at y=%v, want clamped to the bottom", y)
	}
}

func TestLabels(t *testing.T) {
	for d, want := range []string{"0%", "90%", "99%", "99.9%", "99.99%"} {
		if got := quantileLabel(d); got != want {
			t.Errorf("quantileLabel(%d) = %q, want %q", d, got, want)
		}
	}
	for e, want := range map[int]string{0: "1ns", 2: "100ns", 3: "1us", 5: "100us", 6: "1ms", 9: "1s", 10: "10s"} {
		if got := decadeLabel(e); got != want {
			t.Errorf("decadeLabel(%d) = %q, want %q", e, got, want)
		}
	}
}

func TestEmptyLatencyChartSaysSo(t *testing.T) {
	svg := Latency("nothing", "", []Series{{Name: "empty"}})
	wellFormed(t, svg)
	if !strings.Contains(svg, "no latency samples") {
		t.Error("an empty chart does not say it is empty")
	}
}

func TestBarsAreScaledWithinTheirGroup(t *testing.T) {
	svg := Bars("records/s", []BarGroup{
		{Label: "fsync.ring", Bars: []Bar{{"io_uring", 50, "50 (0.5x)"}, {"raw", 100, "100"}}},
		{Label: "pagecache", Bars: []Bar{{"raw", 7e9, "7G"}}},
	})
	wellFormed(t, svg)
	span := barWidth - barLabelW - barTextW
	for _, want := range []string{
		`width="` + num(float64(span)/2) + `"`, // 50 of 100
		`width="` + num(float64(span)) + `"`,   // the largest of each group
		"50 (0.5x)", "io_uring: 50 (0.5x)", "7G",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("bars lack %q", want)
		}
	}
}
