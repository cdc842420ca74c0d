package chart

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// palette colors series and bars in order; the first is the result itself,
// the greys are baselines.
var palette = []string{"#1f6feb", "#6e7781", "#bf8700", "#8250df", "#1a7f37", "#cf222e", "#57606a"}

func color(i int) string { return palette[i%len(palette)] }

// canvas accumulates SVG elements.
type canvas struct {
	b strings.Builder
}

func (c *canvas) open(width, height int, label string) {
	fmt.Fprintf(&c.b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" font-family="sans-serif" font-size="11">`,
		width, height, width, height, esc(label))
	c.b.WriteString("\n")
}

func (c *canvas) close() string {
	c.b.WriteString("</svg>\n")
	return c.b.String()
}

func (c *canvas) line(x1, y1, x2, y2 float64, stroke string, width float64, dash bool) {
	d := ""
	if dash {
		d = ` stroke-dasharray="3 3"`
	}
	fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>`+"\n",
		num(x1), num(y1), num(x2), num(y2), stroke, num(width), d)
}

func (c *canvas) text(x, y float64, anchor, fill, s string) {
	fmt.Fprintf(&c.b, `<text x="%s" y="%s" text-anchor="%s" fill="%s">%s</text>`+"\n",
		num(x), num(y), anchor, fill, esc(s))
}

func (c *canvas) verticalText(x, y float64, s string) {
	fmt.Fprintf(&c.b, `<text x="%s" y="%s" text-anchor="middle" fill="#24292f" transform="rotate(-90 %s %s)">%s</text>`+"\n",
		num(x), num(y), num(x), num(y), esc(s))
}

func (c *canvas) boldText(x, y float64, s string) {
	fmt.Fprintf(&c.b, `<text x="%s" y="%s" font-weight="bold" font-size="12">%s</text>`+"\n", num(x), num(y), esc(s))
}

func (c *canvas) rect(x, y, w, h float64, fill, title string) {
	fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`+"\n",
		num(x), num(y), num(w), num(h), fill, esc(title))
}

func (c *canvas) circle(x, y, r float64, fill, title string) {
	fmt.Fprintf(&c.b, `<circle cx="%s" cy="%s" r="%s" fill="%s"><title>%s</title></circle>`+"\n",
		num(x), num(y), num(r), fill, esc(title))
}

func (c *canvas) polyline(xs, ys []float64, stroke string, width float64, title string) {
	var pts strings.Builder
	for i := range xs {
		if i > 0 {
			pts.WriteByte(' ')
		}
		pts.WriteString(num(xs[i]) + "," + num(ys[i]))
	}
	fmt.Fprintf(&c.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round"><title>%s</title></polyline>`+"\n",
		pts.String(), stroke, num(width), esc(title))
}

// num prints a coordinate with at most one decimal.
func num(v float64) string {
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func esc(s string) string { return html.EscapeString(s) }
