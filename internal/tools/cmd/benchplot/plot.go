package main

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// init makes sans-serif the default font: it reads better than gonum's
// default serif at small sizes.
func init() {
	plot.DefaultFont.Variant = "Sans"
}

// options is everything the command line says about one plot.
type options struct {
	kind          string // line, bar or scatter
	x, y, series  string
	filter        string // benchstat filter expression
	logx, logy    bool
	title, note   string
	legend        string // legend heading; "" means the series projection
	xlabel        string
	ylabel        string
	xticks        []float64 // line: the x values to mark and label; nil for the default
	width, height vg.Length
	dpi           int
	out           string // path prefix; .svg and .png are appended
}

// figure is a plot with what is drawn around it: the legend to its right
// and the caption lines below.
type figure struct {
	plot    *plot.Plot
	legend  plot.Legend
	entries int // legend entries; no legend is drawn when zero
	caption []string
}

// build reads and selects the results and makes the figure that opts
// asks for. It returns the input's unreadable lines as warnings, also
// when it fails.
func build(files *benchfmt.Files, opts options) (*figure, []string, error) {
	q := query{filter: opts.filter, x: opts.x, y: opts.y, series: opts.series}
	switch opts.kind {
	case "line", "bar":
	case "scatter":
		q.scatter = true
		if q.series == "" {
			q.series = ".fullname"
		}
	default:
		return nil, nil, fmt.Errorf("unknown -kind %q: want line, bar or scatter", opts.kind)
	}
	sel, err := selectResults(files, q)
	if err != nil {
		var warnings []string
		if sel != nil {
			warnings = sel.warnings
		}
		return nil, warnings, err
	}
	var fig *figure
	if q.scatter {
		d := sel.scatter()
		if fig, err = scatterPlot(d, opts); err != nil {
			return nil, sel.warnings, err
		}
		var stats []stat
		for _, p := range d.Points {
			stats = append(stats, p.X, p.Y)
		}
		fig.caption = caption(d.Machine, opts, stats, "bars")
		return fig, sel.warnings, nil
	}
	t, err := sel.table(opts.kind == "line")
	if err != nil {
		return nil, sel.warnings, err
	}
	if opts.kind == "line" {
		fig, err = linePlot(t, opts)
	} else {
		fig, err = barPlot(t, opts)
	}
	if err != nil {
		return nil, sel.warnings, err
	}
	var stats []stat
	for _, sr := range t.Series {
		for _, p := range sr.Points {
			stats = append(stats, p.Y)
		}
	}
	spread := "bars"
	if opts.kind == "line" && dense(t) {
		spread = "bands"
	}
	fig.caption = caption(t.Machine, opts, stats, spread)
	return fig, sel.warnings, nil
}

// newPlot makes a plot with the title of opts (or the default title),
// the given axis labels and a grid. Bar plots pass vgrid false, to keep
// grid lines from running through the bars.
func newPlot(opts options, title, xlabel, ylabel string, vgrid bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = cmp.Or(opts.title, title)
	p.Title.TextStyle.Font.Size = 13
	p.Title.Padding = 8
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = 11
	p.Y.Label.TextStyle.Font.Size = 11
	p.X.Tick.Label.Font.Size = 9.5
	p.Y.Tick.Label.Font.Size = 9.5
	p.X.Tick.Marker = tidyTicks{}
	p.Y.Tick.Marker = tidyTicks{}
	grid := plotter.NewGrid()
	if !vgrid {
		grid.Vertical.Color = nil
	}
	p.Add(grid)
	return p
}

// tidyTicks is gonum's default tick placement with shorter labels: 100
// rather than 100.00.
type tidyTicks struct{}

// Ticks implements plot.Ticker.
func (tidyTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if !t.IsMinor() {
			ticks[i].Label = tickLabel(t.Value)
		}
	}
	return ticks
}

// tickLabel writes a tick value short: 100 rather than 100.00, and from
// ten thousand on with an SI prefix, 300k and 10M rather than 300000 and
// 1e+07, so that the axis title's unit still applies.
func tickLabel(v float64) string {
	for _, p := range []struct {
		scale  float64
		prefix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e4, "k"}} {
		if math.Abs(v) >= p.scale {
			if p.prefix == "k" {
				p.scale = 1e3
			}
			return strconv.FormatFloat(v/p.scale, 'g', 4, 64) + p.prefix
		}
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// tidyLogTicks marks a log axis: labels at 1, 2 and 5 times each power of
// ten across up to three decades, at the powers of ten alone across more,
// and at every tick across less than one, with unlabelled minor ticks
// between.
type tidyLogTicks struct{}

// Ticks implements plot.Ticker.
func (tidyLogTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return plot.LogTicks{}.Ticks(lo, hi)
	}
	labelled := []float64{1, 2, 5}
	switch {
	case hi/lo > 1000:
		labelled = []float64{1}
	case hi/lo < 10:
		labelled = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	}
	var ticks []plot.Tick
	for exp := math.Floor(math.Log10(lo)); math.Pow(10, exp) <= hi; exp++ {
		decade := math.Pow(10, exp)
		for m := 1.0; m < 10; m++ {
			v := m * decade
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if slices.Contains(labelled, m) {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// logLabel marks an axis label as log scale when log is set.
func logLabel(label string, log bool) string {
	if log {
		return label + " (log scale)"
	}
	return label
}

// newLegend makes a legend headed by the -legend text or the series
// projection.
func newLegend(fig *figure, opts options, projection string) {
	header := cmp.Or(opts.legend, projection)
	fig.legend = plot.NewLegend()
	fig.legend.Top, fig.legend.Left = true, true
	fig.legend.TextStyle.Font.Size = 10
	fig.legend.ThumbnailWidth = 22
	fig.legend.Padding = vg.Points(3)
	if header != "" {
		fig.legend.Add(header + ":")
	}
}

// denseFrom is the number of points a line may have before its spread is
// drawn as a band and its markers shrink: error bars and markers side by
// side at every size of a sweep hide the line they are on.
const denseFrom = 24

// dense reports whether a line of t has denseFrom points or more.
func dense(t *table) bool {
	for _, s := range t.Series {
		if len(s.Points) >= denseFrom {
			return true
		}
	}
	return false
}

// linePlot draws one line per series through the medians, with error
// bars over each median's interval, or a pale band along a dense line.
func linePlot(t *table, opts options) (*figure, error) {
	dense := dense(t)
	for _, x := range opts.xticks {
		if opts.logx && x <= 0 {
			return nil, fmt.Errorf("-logx needs positive -xticks, got %v", x)
		}
	}
	p := newPlot(opts, t.Unit+" by "+t.XKey, logLabel(cmp.Or(opts.xlabel, t.XKey), opts.logx), logLabel(cmp.Or(opts.ylabel, t.Unit), opts.logy), true)
	fig := &figure{plot: p}
	if t.SeriesKey != "" {
		newLegend(fig, opts, t.SeriesKey)
	}
	for i, s := range t.Series {
		xys := make(plotter.XYs, len(s.Points))
		errs := make(plotter.YErrors, len(s.Points))
		for j, pt := range s.Points {
			if opts.logx && pt.XNum <= 0 {
				return nil, fmt.Errorf("-logx needs positive x values, got %s=%s", t.XKey, pt.X)
			}
			if opts.logy && pt.Y.Lo <= 0 {
				return nil, fmt.Errorf("-logy needs positive values, got %v %s at %s=%s", pt.Y.Lo, t.Unit, t.XKey, pt.X)
			}
			xys[j] = plotter.XY{X: pt.XNum, Y: pt.Y.Median}
			errs[j].Low, errs[j].High = pt.Y.Median-pt.Y.Lo, pt.Y.Hi-pt.Y.Median
		}
		clr, shape, dashes := style(i)
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Name, err)
		}
		line.Color, line.Width, line.Dashes = clr, vg.Points(1.5), dashes
		points.Color, points.Shape, points.Radius = clr, shape, vg.Points(3)
		if dense {
			band, err := spreadBand(xys, errs, clr)
			if err != nil {
				return nil, fmt.Errorf("series %s: %w", s.Name, err)
			}
			line.Width, points.Radius = vg.Points(1.2), vg.Points(1.6)
			p.Add(band, line, points)
		} else {
			bars, err := plotter.NewYErrorBars(errorXYs{xys, errs})
			if err != nil {
				return nil, fmt.Errorf("series %s: %w", s.Name, err)
			}
			bars.Color, bars.Width, bars.CapWidth = clr, vg.Points(1), vg.Points(6)
			p.Add(line, points, bars)
		}
		if t.SeriesKey != "" {
			fig.legend.Add(s.Name, line, points)
			fig.entries++
		}
	}
	if opts.logx {
		p.X.Scale = plot.LogScale{}
		if len(t.Xs) <= 16 {
			// Tick the measured x values, as written in the names.
			ticks := make(plot.ConstantTicks, 0, len(t.Xs))
			for _, s := range t.Series {
				for _, pt := range s.Points {
					if !slices.ContainsFunc(ticks, func(tk plot.Tick) bool { return tk.Label == pt.X }) {
						ticks = append(ticks, plot.Tick{Value: pt.XNum, Label: pt.X})
					}
				}
			}
			p.X.Tick.Marker = ticks
		} else {
			p.X.Tick.Marker = tidyLogTicks{}
		}
		pad := logPad(p.X.Min, p.X.Max, 0.03)
		p.X.Min, p.X.Max = p.X.Min/pad, p.X.Max*pad
	} else {
		pad := 0.03 * (p.X.Max - p.X.Min)
		if pad == 0 {
			pad = 1
		}
		p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
	}
	if opts.xticks != nil {
		ticks := make(plot.ConstantTicks, len(opts.xticks))
		for i, x := range opts.xticks {
			ticks[i] = plot.Tick{Value: x, Label: tickLabel(x)}
		}
		p.X.Tick.Marker = ticks
	}
	setYRange(p, opts.logy)
	return fig, nil
}

// spreadBand is a pale band over the intervals of a line's points: from
// each point's low end left to right, back along the high ends.
func spreadBand(xys plotter.XYs, errs plotter.YErrors, clr color.Color) (*plotter.Polygon, error) {
	outline := make(plotter.XYs, 0, 2*len(xys))
	for i, xy := range xys {
		outline = append(outline, plotter.XY{X: xy.X, Y: xy.Y - errs[i].Low})
	}
	for i := len(xys) - 1; i >= 0; i-- {
		outline = append(outline, plotter.XY{X: xys[i].X, Y: xys[i].Y + errs[i].High})
	}
	band, err := plotter.NewPolygon(outline)
	if err != nil {
		return nil, err
	}
	r, g, b, _ := clr.RGBA()
	// One sixth opaque: where bands of several lines cross, each still
	// shows through the others.
	band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 42}
	band.LineStyle.Width = 0
	return band, nil
}

// errorXYs joins points and their y errors for plotter.NewYErrorBars.
type errorXYs struct {
	plotter.XYs
	plotter.YErrors
}

// logPad is the factor that widens [lo, hi] on a log axis by frac of its
// decades at each end, or by 2 when the range is a single value.
func logPad(lo, hi, frac float64) float64 {
	if pad := math.Pow(hi/lo, frac); pad > 1.0001 {
		return pad
	}
	return 2
}

// setYRange starts a linear y axis at zero, when no value is negative, and
// leaves headroom above the highest value.
func setYRange(p *plot.Plot, logy bool) {
	if logy {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = tidyLogTicks{}
		pad := logPad(p.Y.Min, p.Y.Max, 0.05)
		p.Y.Min, p.Y.Max = p.Y.Min/pad, p.Y.Max*pad
		return
	}
	if p.Y.Min > 0 {
		p.Y.Min = 0
	}
	if p.Y.Max == p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	p.Y.Max += 0.05 * (p.Y.Max - p.Y.Min)
}

// barPlot draws grouped bars: one group per x category, one bar per series,
// each bar the median with a whisker over its interval. On a log y axis
// the bars rise from the bottom of the axis, so values decades apart all
// show.
func barPlot(t *table, opts options) (*figure, error) {
	if opts.logx {
		return nil, fmt.Errorf("-logx is not supported for -kind bar: its x axis is categories")
	}
	p := newPlot(opts, t.Unit+" by "+t.XKey, cmp.Or(opts.xlabel, t.XKey), logLabel(cmp.Or(opts.ylabel, t.Unit), opts.logy), false)
	fig := &figure{plot: p}
	if t.SeriesKey != "" {
		newLegend(fig, opts, t.SeriesKey)
	}
	bars := &groupedBars{ncat: len(t.Xs), log: opts.logy}
	for i, s := range t.Series {
		clr, shape, _ := style(i)
		for _, pt := range s.Points {
			if opts.logy && pt.Y.Lo <= 0 {
				return nil, fmt.Errorf("-logy needs positive values, got %v %s at %s=%s", pt.Y.Lo, t.Unit, t.XKey, pt.X)
			}
			bars.bars = append(bars.bars, bar{cat: slices.Index(t.Xs, pt.X), series: i, y: pt.Y, color: clr, shape: shape})
		}
		if t.SeriesKey != "" {
			fig.legend.Add(s.Name, barThumb{clr, shape})
			fig.entries++
		}
	}
	p.Add(bars)
	p.NominalX(t.Xs...)
	p.X.Min, p.X.Max = -0.5, float64(len(t.Xs))-0.5
	setYRange(p, opts.logy)
	// Slant the category names when they would not fit side by side.
	var total vg.Length
	for _, x := range t.Xs {
		total += p.X.Tick.Label.Width(x) + 8
	}
	if total > opts.width*0.6 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YTop
	}
	return fig, nil
}

// bar is one bar of a grouped bar chart: its colour, and its series'
// marker drawn at its foot, which tells series apart in greyscale.
type bar struct {
	cat, series int
	y           stat
	color       color.Color
	shape       draw.GlyphDrawer
}

// groupedBars draws bars grouped by category, in data coordinates: the
// category i spans x from i-0.4 to i+0.4, shared by the series.
type groupedBars struct {
	ncat int
	bars []bar
	log  bool // bars rise from the axis minimum, not from zero
}

// Plot implements plot.Plotter.
func (g *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	// Each category shows only the series it has, side by side and
	// centred, all bars as wide as in the fullest category.
	slot := make([]int, len(g.bars))
	present := make([]int, g.ncat)
	for i, b := range g.bars {
		slot[i] = present[b.cat]
		present[b.cat]++
	}
	w := 0.8 / float64(max(slices.Max(present), 1))
	edge := draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.5)}
	whisker := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	base := math.Max(p.Y.Min, 0)
	if g.log {
		base = p.Y.Min
	}
	for i, b := range g.bars {
		left := float64(b.cat) - w*float64(present[b.cat])/2 + float64(slot[i])*w
		x0, x1 := trX(left+0.06*w), trX(left+0.94*w)
		y0, y1 := trY(base), trY(b.y.Median)
		box := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(b.color, c.ClipPolygonY(box))
		c.StrokeLines(edge, c.ClipLinesY(append(box, box[0]))...)
		if r := min(vg.Points(3), (x1-x0)/4); b.shape != nil && y1-y0 > 4*r {
			c.DrawGlyph(draw.GlyphStyle{Color: contrast(b.color), Radius: r, Shape: b.shape},
				vg.Point{X: (x0 + x1) / 2, Y: y0 + 2*r})
		}
		if b.y.N > 1 {
			xm := (x0 + x1) / 2
			capw := (x1 - x0) / 4
			lo, hi := trY(b.y.Lo), trY(b.y.Hi)
			c.StrokeLines(whisker, c.ClipLinesY(
				[]vg.Point{{X: xm, Y: lo}, {X: xm, Y: hi}},
				[]vg.Point{{X: xm - capw, Y: lo}, {X: xm + capw, Y: lo}},
				[]vg.Point{{X: xm - capw, Y: hi}, {X: xm + capw, Y: hi}},
			)...)
		}
	}
}

// DataRange implements plot.DataRanger: every category and every whisker,
// and zero on a linear axis.
func (g *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = math.Inf(1), math.Inf(-1)
	if !g.log {
		ymin, ymax = 0, 0
	}
	for _, b := range g.bars {
		ymin, ymax = math.Min(ymin, b.y.Lo), math.Max(ymax, b.y.Hi)
	}
	return -0.5, float64(g.ncat) - 0.5, ymin, ymax
}

// barThumb is a legend thumbnail: a filled square in the bar colour
// with the series' marker, as on the bars.
type barThumb struct {
	color color.Color
	shape draw.GlyphDrawer
}

// Thumbnail implements plot.Thumbnailer.
func (b barThumb) Thumbnail(c *draw.Canvas) {
	side := min(c.Max.Y-c.Min.Y, c.Max.X-c.Min.X)
	x0 := c.Min.X + (c.Max.X-c.Min.X-side)/2
	c.FillPolygon(b.color, []vg.Point{
		{X: x0, Y: c.Min.Y}, {X: x0 + side, Y: c.Min.Y},
		{X: x0 + side, Y: c.Max.Y}, {X: x0, Y: c.Max.Y},
	})
	if b.shape != nil {
		c.DrawGlyph(draw.GlyphStyle{Color: contrast(b.color), Radius: side / 3, Shape: b.shape},
			vg.Point{X: x0 + side/2, Y: (c.Min.Y + c.Max.Y) / 2})
	}
}

// contrast is black on a light colour and white on a dark one, for a
// marker drawn on it.
func contrast(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	if 299*r+587*g+114*b > 1000*0x7fff {
		return color.Black
	}
	return color.White
}

// palette are the series' colours: the Okabe-Ito set, which people with
// any common colour blindness tell apart, without its pale yellow, plus
// grey and brown. One red (vermillion); the first series is black.
var palette = []color.Color{
	color.RGBA{0, 0, 0, 255},       // black
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{110, 110, 110, 255}, // grey
	color.RGBA{140, 81, 10, 255},   // brown
}

// dashPatterns are the lines' dash patterns, which tell series apart in
// a greyscale print where colours of like brightness do not.
var dashPatterns = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

// style gives series i a colour, a marker shape and a line dash pattern.
// Colour and shape step on together; with 9 colours and 8 shapes no two
// of the first 72 series share both, and the first 8 differ in marker, so
// they stay apart in greyscale too.
func style(i int) (color.Color, draw.GlyphDrawer, []vg.Length) {
	return palette[i%len(palette)], plotutil.Shape(i), dashPatterns[i%len(dashPatterns)]
}

// scatterPlot draws one point per series at the medians of the two units,
// with interval bars in both directions; the legend names the points, as
// labels beside them would overlap.
func scatterPlot(d *scatterData, opts options) (*figure, error) {
	p := newPlot(opts, d.YUnit+" vs "+d.XUnit, logLabel(cmp.Or(opts.xlabel, d.XUnit), opts.logx), logLabel(cmp.Or(opts.ylabel, d.YUnit), opts.logy), true)
	fig := &figure{plot: p}
	newLegend(fig, opts, d.SeriesKey)
	for i, pt := range d.Points {
		if opts.logx && pt.X.Lo <= 0 {
			return nil, fmt.Errorf("-logx needs positive values, got %v %s for %s", pt.X.Lo, d.XUnit, pt.Label)
		}
		if opts.logy && pt.Y.Lo <= 0 {
			return nil, fmt.Errorf("-logy needs positive values, got %v %s for %s", pt.Y.Lo, d.YUnit, pt.Label)
		}
		clr, shape, _ := style(i)
		xys := plotter.XYs{{X: pt.X.Median, Y: pt.Y.Median}}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pt.Label, err)
		}
		sc.Color, sc.Shape, sc.Radius = clr, shape, vg.Points(4)
		p.Add(sc)
		if pt.X.N > 1 || pt.Y.N > 1 {
			xe, err := plotter.NewXErrorBars(struct {
				plotter.XYs
				plotter.XErrors
			}{xys, plotter.XErrors{{Low: pt.X.Median - pt.X.Lo, High: pt.X.Hi - pt.X.Median}}})
			if err != nil {
				return nil, err
			}
			ye, err := plotter.NewYErrorBars(errorXYs{xys, plotter.YErrors{{Low: pt.Y.Median - pt.Y.Lo, High: pt.Y.Hi - pt.Y.Median}}})
			if err != nil {
				return nil, err
			}
			xe.Color, ye.Color = clr, clr
			xe.CapWidth, ye.CapWidth = vg.Points(5), vg.Points(5)
			p.Add(xe, ye)
		}
		fig.legend.Add(pt.Label, sc)
		fig.entries++
	}
	for _, ax := range []struct {
		a   *plot.Axis
		log bool
	}{{&p.X, opts.logx}, {&p.Y, opts.logy}} {
		if ax.log {
			ax.a.Scale = plot.LogScale{}
			ax.a.Tick.Marker = tidyLogTicks{}
			pad := logPad(ax.a.Min, ax.a.Max, 0.08)
			ax.a.Min, ax.a.Max = ax.a.Min/pad, ax.a.Max*pad
			continue
		}
		pad := 0.08 * (ax.a.Max - ax.a.Min)
		if pad == 0 {
			pad = math.Max(math.Abs(ax.a.Max)*0.1, 1)
		}
		ax.a.Min, ax.a.Max = ax.a.Min-pad, ax.a.Max+pad
	}
	return fig, nil
}

// caption describes the machine, the statistics behind the points (their
// spread drawn as "bars" or "bands"), the filter and the note.
func caption(m machine, opts options, stats []stat, spread string) []string {
	var first []string
	if m.cpu != "" {
		first = append(first, "cpu: "+m.cpu)
	}
	if m.kernel != "" {
		first = append(first, "kernel: "+m.kernel)
	}
	if m.platform != "" {
		first = append(first, m.platform)
	}
	if opts.note != "" {
		first = append(first, opts.note)
	}
	lo, hi := math.MaxInt, 0
	var ci, minmax int
	for _, s := range stats {
		lo, hi = min(lo, s.N), max(hi, s.N)
		switch {
		case s.N < 2:
		case s.CI:
			ci++
		default:
			minmax++
		}
	}
	runs := fmt.Sprint(lo)
	if lo != hi {
		runs = fmt.Sprintf("%d–%d", lo, hi)
	}
	second := "one run per point"
	if hi > 1 {
		second = "median of " + runs + " runs"
		switch {
		case minmax == 0:
			second += ", " + spread + " span the 95 % confidence interval of the median"
		case ci == 0:
			second += ", " + spread + " span min–max (too few runs for a confidence interval)"
		default:
			second += ", " + spread + " span the 95 % confidence interval of the median, or min–max where there are fewer than 6 runs"
		}
	}
	if opts.filter != "" {
		second += "; filter " + opts.filter
	}
	return []string{strings.Join(first, " · "), second}
}

// draw lays the figure out on c: caption lines along the bottom, the
// legend on the right, level with the top of the data area, and the plot
// in the rest.
func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	pad := vg.Points(8)

	sty := f.plot.X.Tick.Label
	sty.Font.Size = 9
	sty.Color = color.Gray{Y: 70}
	sty.Rotation = 0
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	var lines []string
	for _, l := range f.caption {
		lines = append(lines, wrap(sty, l, c.Max.X-c.Min.X-2*pad)...)
	}
	lineH := sty.FontExtents().Height * 1.2
	for i, l := range lines {
		y := c.Min.Y + pad/2 + vg.Length(len(lines)-1-i)*lineH
		c.FillText(sty, vg.Point{X: c.Min.X + pad, Y: y}, l)
	}
	body := draw.Crop(c, pad/2, -pad, vg.Length(len(lines))*lineH+pad, -pad/2)

	// The y axis title is drawn here, not by gonum: gonum reserves room
	// for it around the arithmetic middle of the axis range, which on a
	// log axis sits near the top and squeezes the plot down.
	ylabel := f.plot.Y.Label
	f.plot.Y.Label.Text = ""
	defer func() { f.plot.Y.Label = ylabel }()
	var labelW vg.Length
	if ylabel.Text != "" {
		labelW = ylabel.TextStyle.Height(ylabel.Text) + pad
	}

	plotArea := draw.Crop(body, labelW, 0, 0, 0)
	if f.entries > 0 {
		r := f.legend.Rectangle(body)
		plotArea = draw.Crop(plotArea, 0, -(r.Max.X - r.Min.X + 2*pad), 0, 0)
	}
	data := f.plot.DataCanvas(plotArea)
	f.plot.Draw(plotArea)
	if ylabel.Text != "" {
		sty := ylabel.TextStyle
		sty.Rotation = math.Pi / 2
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: body.Min.X, Y: (data.Min.Y + data.Max.Y) / 2}, ylabel.Text)
	}
	if f.entries == 0 {
		return
	}
	legendArea := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: plotArea.Max.X + pad, Y: data.Min.Y},
		Max: vg.Point{X: body.Max.X, Y: data.Max.Y},
	}}
	f.legend.Draw(legendArea)
}

// wrap breaks s into lines no wider than width in sty, at spaces.
func wrap(sty text.Style, s string, width vg.Length) []string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return nil
	}
	var lines []string
	cur := words[0]
	for _, w := range words[1:] {
		if sty.Width(cur+" "+w) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		cur += " " + w
	}
	return append(lines, cur)
}

// write renders the figure to out+".svg" and out+".png", creating the
// directory if needed, and returns the two paths.
func (f *figure) write(out string, width, height vg.Length, dpi int) (paths []string, err error) {
	// gonum/plot panics on some inputs it cannot draw; report those as
	// errors instead of crashing.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rendering failed: %v", r)
		}
	}()
	if dir := filepath.Dir(out); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}

	svg := vgsvg.New(width, height)
	f.draw(draw.New(svg))
	if err := writeFile(out+".svg", svg); err != nil {
		return nil, err
	}

	img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))
	f.draw(draw.New(img))
	if err := writeFile(out+".png", vgimg.PngCanvas{Canvas: img}); err != nil {
		return nil, err
	}
	return []string{out + ".svg", out + ".png"}, nil
}

// writeFile writes what wt renders to path.
func writeFile(path string, wt io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := wt.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
