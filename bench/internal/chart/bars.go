package chart

// Bar is one horizontal bar: Value drawn to scale, Text written after it.
type Bar struct {
	Label string
	Value float64
	Text  string // the value and any ratio, as the reader should see it
}

// BarGroup is a result's bar followed by its baselines' bars.
type BarGroup struct {
	Label string
	Bars  []Bar
}

// The bar chart's geometry, in pixels.
const (
	barWidth     = 760
	barLabelW    = 250
	barTextW     = 170
	barHeight    = 16
	barGap       = 4
	groupHead    = 22
	groupGap     = 10
	barTitleRoom = 28
)

// Bars draws each group's bars to the scale of the group's largest value,
// so a result and its baselines compare at a glance; different groups
// measure different things and share no axis. Each bar's Text is written
// beside it.
func Bars(title string, groups []BarGroup) string {
	height := barTitleRoom
	for _, g := range groups {
		height += groupHead + len(g.Bars)*(barHeight+barGap) + groupGap
	}
	var c canvas
	c.open(barWidth, height, title)
	c.boldText(0, 16, title)
	y := float64(barTitleRoom)
	for _, g := range groups {
		y = drawGroup(&c, g, y)
	}
	return c.close()
}

func drawGroup(c *canvas, g BarGroup, y float64) float64 {
	c.boldText(0, y+14, g.Label)
	y += groupHead
	var top float64
	for _, b := range g.Bars {
		top = max(top, b.Value)
	}
	span := float64(barWidth - barLabelW - barTextW)
	for i, b := range g.Bars {
		w := 0.0
		if top > 0 {
			w = b.Value / top * span
		}
		c.text(barLabelW-8, y+12, "end", "#24292f", b.Label)
		c.rect(barLabelW, y, max(w, 1), barHeight, color(i), b.Label+": "+b.Text)
		c.text(barLabelW+w+6, y+12, "start", "#24292f", b.Text)
		y += barHeight + barGap
	}
	return y + groupGap
}
