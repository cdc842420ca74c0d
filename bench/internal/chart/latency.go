package chart

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Point is one point of a percentile curve: Quantile (0..1) of the samples
// were at most Value.
type Point struct {
	Quantile float64
	Value    time.Duration
}

// Mark is a named percentile drawn as a dot with its value written beside it.
type Mark struct {
	Label string // "p99"
	Point
}

// Series is one latency distribution to draw.
type Series struct {
	Name   string
	Count  int64   // samples; places the maximum at x = Count on the 1/(1-q) axis
	Points []Point // ascending in Quantile, ending at the maximum (Quantile 1)
	Marks  []Mark
	Label  func(time.Duration) string // formats values in marks' text
}

// The latency chart's geometry, in pixels. The legend goes under the
// plot, one line per series, so long names are never cut.
const (
	latWidth   = 760
	latHeight  = 380 // without the legend
	latLeft    = 64
	latRight   = 40
	latTop     = 40
	latBottom  = 48
	legendLine = 16
)

// Latency draws series as percentile curves on one chart, under a title
// and a subtitle line: x is 1/(1-q) on a
// log scale (0%, 90%, 99%, 99.9% ... equally spaced), y the latency on a log
// scale. The first series is the result and is drawn heaviest, with its
// marks labelled; the others (its baselines) are drawn thinner, their marks
// as tooltips. Empty series are skipped; with none, the chart says so.
func Latency(title, subtitle string, series []Series) string {
	var c canvas
	drawn := nonEmpty(series)
	c.open(latWidth, latHeight+len(drawn)*legendLine+8, title+" "+subtitle)
	c.boldText(0, 14, title)
	c.text(0, 28, "start", "#57606a", subtitle)
	if len(drawn) == 0 {
		c.text(latWidth/2, latHeight/2, "middle", "#57606a", "no latency samples")
		return c.close()
	}
	ax := newLatencyAxes(drawn)
	ax.draw(&c)
	for i, s := range drawn {
		drawSeries(&c, ax, s, i)
	}
	drawLegend(&c, drawn)
	return c.close()
}

func nonEmpty(series []Series) []Series {
	var out []Series
	for _, s := range series {
		if len(s.Points) > 0 && s.Count > 0 {
			out = append(out, s)
		}
	}
	return out
}

// latencyAxes maps a quantile and a latency to pixels. Both axes are in
// decades: x from 0 to xDecades of 1/(1-q), y from 10^yLow to 10^yHigh ns.
type latencyAxes struct {
	xDecades    int
	yLow, yHigh int
}

func newLatencyAxes(series []Series) latencyAxes {
	ax := latencyAxes{xDecades: 1, yLow: math.MaxInt, yHigh: math.MinInt}
	for _, s := range series {
		ax.xDecades = max(ax.xDecades, int(math.Ceil(math.Log10(float64(s.Count)))))
		for _, p := range s.Points {
			if p.Value > 0 {
				ax.yLow = min(ax.yLow, int(math.Floor(math.Log10(float64(p.Value)))))
			}
			ax.yHigh = max(ax.yHigh, int(math.Ceil(math.Log10(float64(max(p.Value, 1))))))
		}
	}
	if ax.yLow == math.MaxInt {
		ax.yLow = 0
	}
	if ax.yHigh <= ax.yLow {
		ax.yHigh = ax.yLow + 1
	}
	return ax
}

// x places quantile q of a series of count samples. The last sample sits
// at q = 1 - 1/count, so the maximum (q = 1) is drawn there.
func (ax latencyAxes) x(q float64, count int64) float64 {
	q = min(q, 1-1/float64(max(count, 2)))
	decades := math.Log10(1 / (1 - q))
	return latLeft + decades/float64(ax.xDecades)*(latWidth-latLeft-latRight)
}

func (ax latencyAxes) y(v time.Duration) float64 {
	lv := math.Log10(math.Max(float64(v), math.Pow10(ax.yLow)))
	frac := (lv - float64(ax.yLow)) / float64(ax.yHigh-ax.yLow)
	return latHeight - latBottom - frac*(latHeight-latTop-latBottom)
}

func (ax latencyAxes) draw(c *canvas) {
	left, right := float64(latLeft), float64(latWidth-latRight)
	top, bottom := float64(latTop), float64(latHeight-latBottom)
	for d := 0; d <= ax.xDecades; d++ {
		x := left + float64(d)/float64(ax.xDecades)*(right-left)
		c.line(x, top, x, bottom, "#d0d7de", 1, d > 0)
		c.text(x, bottom+14, "middle", "#24292f", quantileLabel(d))
	}
	for e := ax.yLow; e <= ax.yHigh; e++ {
		y := ax.y(time.Duration(math.Pow10(e)))
		c.line(left, y, right, y, "#d0d7de", 1, e > ax.yLow)
		c.text(left-6, y+4, "end", "#24292f", decadeLabel(e))
	}
	c.text((left+right)/2, bottom+34, "middle", "#24292f", "percentile (log scale of 1/(1-q))")
	c.verticalText(14, (top+bottom)/2, "latency")
}

// quantileLabel names decade d of 1/(1-q): 0%, 90%, 99%, 99.9%, ...
func quantileLabel(d int) string {
	switch d {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", d-2) + "%"
}

// decadeLabel names 10^e nanoseconds: 1us, 10us, 100us, 1ms ...
func decadeLabel(e int) string {
	units := []string{"ns", "us", "ms", "s"}
	i := min(max(e/3, 0), len(units)-1)
	return strconv.FormatFloat(math.Pow10(e-3*i), 'f', -1, 64) + units[i]
}

func drawSeries(c *canvas, ax latencyAxes, s Series, i int) {
	xs, ys := make([]float64, len(s.Points)), make([]float64, len(s.Points))
	for j, p := range s.Points {
		xs[j], ys[j] = ax.x(p.Quantile, s.Count), ax.y(p.Value)
	}
	width := 1.5
	if i == 0 {
		width = 2.5
	}
	c.polyline(xs, ys, color(i), width, s.Name)
	for _, m := range s.Marks {
		x, y := ax.x(m.Quantile, s.Count), ax.y(m.Value)
		label := m.Label + " " + s.Label(m.Value)
		c.circle(x, y, 3, color(i), s.Name+" "+label)
		if i == 0 {
			// The maximum is written under its dot: it often shares its x
			// with p99.9.
			dy := -7.0
			if m.Quantile >= 1 {
				dy = 15
			}
			c.text(x-5, y+dy, "end", color(i), label)
		}
	}
}

func drawLegend(c *canvas, series []Series) {
	x := float64(latLeft)
	for i, s := range series {
		y := float64(latHeight + 4 + i*legendLine)
		c.line(x, y-4, x+18, y-4, color(i), 3, false)
		c.text(x+24, y, "start", "#24292f", s.Name)
	}
}
