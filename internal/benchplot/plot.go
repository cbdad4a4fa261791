package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
	filters       filter
	logx, logy    bool
	title, note   string
	xlabel        string
	ylabel        string
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

// build filters the results and makes the figure that opts asks for.
func build(rs *resultSet, opts options) (*figure, error) {
	used, err := opts.filters.apply(rs.results)
	if err != nil {
		return nil, err
	}
	var fig *figure
	switch opts.kind {
	case "line", "bar":
		t, err := groupXY(rs, used, opts.x, opts.series, opts.y, opts.kind == "line")
		if err != nil {
			return nil, err
		}
		if opts.kind == "line" {
			fig, err = linePlot(t, opts)
		} else {
			fig, err = barPlot(t, opts)
		}
		if err != nil {
			return nil, err
		}
		fig.caption = caption(t.Used, opts, countRange(t))
	case "scatter":
		series := opts.series
		if series == "" {
			series = keyFullName
		}
		d, err := groupScatter(rs, used, series, opts.x, opts.y)
		if err != nil {
			return nil, err
		}
		if fig, err = scatterPlot(d, opts); err != nil {
			return nil, err
		}
		lo, hi := math.MaxInt, 0
		for _, p := range d.Points {
			lo, hi = min(lo, p.X.N, p.Y.N), max(hi, p.X.N, p.Y.N)
		}
		fig.caption = caption(d.Used, opts, [2]int{lo, hi})
	default:
		return nil, fmt.Errorf("unknown -kind %q: want line, bar or scatter", opts.kind)
	}
	return fig, nil
}

// newPlot makes a plot with the title and axis labels of opts, falling
// back to the given defaults, and a grid. Bar plots pass vgrid false, to
// keep grid lines from running through the bars.
func newPlot(opts options, title, xlabel, ylabel string, vgrid bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = cmp(opts.title, title)
	p.Title.TextStyle.Font.Size = 13
	p.Title.Padding = 8
	p.X.Label.Text = cmp(opts.xlabel, xlabel)
	p.Y.Label.Text = cmp(opts.ylabel, ylabel)
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
			ticks[i].Label = strconv.FormatFloat(t.Value, 'g', 6, 64)
		}
	}
	return ticks
}

// tidyLogTicks marks a log axis: powers of ten across two decades or
// more, evenly spaced round numbers across less, labelled like tidyTicks.
type tidyLogTicks struct{}

// Ticks implements plot.Ticker.
func (tidyLogTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi/lo >= 100 {
		ticks := plot.LogTicks{}.Ticks(lo, hi)
		for i, t := range ticks {
			if !t.IsMinor() {
				ticks[i].Label = strconv.FormatFloat(t.Value, 'g', 6, 64)
			}
		}
		return ticks
	}
	var ticks []plot.Tick
	for _, t := range (tidyTicks{}).Ticks(lo, hi) {
		if t.Value > 0 {
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// cmp returns a if it is not empty, else b.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// logLabel marks an axis label as log scale when log is set.
func logLabel(label string, log bool) string {
	if log {
		return label + " (log scale)"
	}
	return label
}

// defaultTitle names the benchmarks the plot shows.
func defaultTitle(used []result, what string) string {
	names := valuesOf(used, keyName)
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	return strings.Join(names, ", ") + ": " + what
}

// newLegend makes a legend headed by the series key.
func newLegend(fig *figure, header string) {
	fig.legend = plot.NewLegend()
	fig.legend.Top, fig.legend.Left = true, true
	fig.legend.TextStyle.Font.Size = 10
	fig.legend.ThumbnailWidth = 22
	fig.legend.Padding = vg.Points(3)
	if header != "" {
		fig.legend.Add(header + ":")
	}
}

// linePlot draws one line per series through the medians, with min–max
// error bars.
func linePlot(t *table, opts options) (*figure, error) {
	p := newPlot(opts, defaultTitle(t.Used, t.Unit+" by "+t.XKey), logLabel(t.XKey, opts.logx), logLabel(t.Unit, opts.logy), true)
	fig := &figure{plot: p}
	if t.SeriesKey != "" {
		newLegend(fig, t.SeriesKey)
	}
	for i, s := range t.Series {
		xys := make(plotter.XYs, len(s.Points))
		errs := make(plotter.YErrors, len(s.Points))
		for j, pt := range s.Points {
			if opts.logx && pt.XNum <= 0 {
				return nil, fmt.Errorf("-logx needs positive x values, got %s=%s", t.XKey, pt.X)
			}
			if opts.logy && pt.Y.Min <= 0 {
				return nil, fmt.Errorf("-logy needs positive values, got %v %s at %s=%s", pt.Y.Min, t.Unit, t.XKey, pt.X)
			}
			xys[j] = plotter.XY{X: pt.XNum, Y: pt.Y.Median}
			errs[j].Low, errs[j].High = pt.Y.Median-pt.Y.Min, pt.Y.Max-pt.Y.Median
		}
		clr := plotutil.Color(i)
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Name, err)
		}
		line.Color, line.Width = clr, vg.Points(1.5)
		points.Color, points.Shape, points.Radius = clr, plotutil.Shape(i), vg.Points(3)
		bars, err := plotter.NewYErrorBars(errorXYs{xys, errs})
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Name, err)
		}
		bars.Color, bars.Width, bars.CapWidth = clr, vg.Points(1), vg.Points(6)
		p.Add(line, points, bars)
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
	setYRange(p, opts.logy)
	return fig, nil
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
// each bar the median with a min–max whisker.
func barPlot(t *table, opts options) (*figure, error) {
	if opts.logy {
		return nil, fmt.Errorf("-logy is not supported for -kind bar")
	}
	if opts.logx {
		return nil, fmt.Errorf("-logx is not supported for -kind bar: its x axis is categories")
	}
	p := newPlot(opts, defaultTitle(t.Used, t.Unit+" by "+t.XKey), t.XKey, t.Unit, false)
	fig := &figure{plot: p}
	if t.SeriesKey != "" {
		newLegend(fig, t.SeriesKey)
	}
	bars := &groupedBars{ncat: len(t.Xs)}
	for i, s := range t.Series {
		clr := plotutil.Color(i)
		for _, pt := range s.Points {
			bars.bars = append(bars.bars, bar{cat: slices.Index(t.Xs, pt.X), series: i, y: pt.Y, color: clr})
		}
		if t.SeriesKey != "" {
			fig.legend.Add(s.Name, barThumb{clr})
			fig.entries++
		}
	}
	bars.nseries = len(t.Series)
	p.Add(bars)
	p.NominalX(t.Xs...)
	p.X.Min, p.X.Max = -0.5, float64(len(t.Xs))-0.5
	setYRange(p, false)
	// Slant the category names when they would not fit side by side.
	var total vg.Length
	for _, x := range t.Xs {
		total += p.X.Tick.Label.Width(x) + 8
	}
	if total > opts.width*0.7 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YTop
	}
	return fig, nil
}

// bar is one bar of a grouped bar chart.
type bar struct {
	cat, series int
	y           stat
	color       color.Color
}

// groupedBars draws bars grouped by category, in data coordinates: the
// category i spans x from i-0.4 to i+0.4, shared by the series.
type groupedBars struct {
	ncat, nseries int
	bars          []bar
}

// Plot implements plot.Plotter.
func (g *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	w := 0.8 / float64(g.nseries)
	edge := draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.5)}
	whisker := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	for _, b := range g.bars {
		left := float64(b.cat) - 0.4 + float64(b.series)*w
		x0, x1 := trX(left+0.06*w), trX(left+0.94*w)
		y0, y1 := trY(math.Max(p.Y.Min, 0)), trY(b.y.Median)
		box := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(b.color, c.ClipPolygonY(box))
		c.StrokeLines(edge, c.ClipLinesY(append(box, box[0]))...)
		if b.y.N > 1 {
			xm := (x0 + x1) / 2
			capw := (x1 - x0) / 4
			lo, hi := trY(b.y.Min), trY(b.y.Max)
			c.StrokeLines(whisker, c.ClipLinesY(
				[]vg.Point{{X: xm, Y: lo}, {X: xm, Y: hi}},
				[]vg.Point{{X: xm - capw, Y: lo}, {X: xm + capw, Y: lo}},
				[]vg.Point{{X: xm - capw, Y: hi}, {X: xm + capw, Y: hi}},
			)...)
		}
	}
}

// DataRange implements plot.DataRanger: every category and every whisker.
func (g *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = 0, 0
	for _, b := range g.bars {
		ymin, ymax = math.Min(ymin, b.y.Min), math.Max(ymax, b.y.Max)
	}
	return -0.5, float64(g.ncat) - 0.5, ymin, ymax
}

// barThumb is a legend thumbnail: a filled square in the bar colour.
type barThumb struct{ color color.Color }

// Thumbnail implements plot.Thumbnailer.
func (b barThumb) Thumbnail(c *draw.Canvas) {
	side := min(c.Max.Y-c.Min.Y, c.Max.X-c.Min.X)
	x0 := c.Min.X + (c.Max.X-c.Min.X-side)/2
	c.FillPolygon(b.color, []vg.Point{
		{X: x0, Y: c.Min.Y}, {X: x0 + side, Y: c.Min.Y},
		{X: x0 + side, Y: c.Max.Y}, {X: x0, Y: c.Max.Y},
	})
}

// scatterPlot draws one labelled point per series at the medians of the two
// units, with min–max error bars in both directions.
func scatterPlot(d *scatterData, opts options) (*figure, error) {
	p := newPlot(opts, defaultTitle(d.Used, d.YUnit+" vs "+d.XUnit), logLabel(d.XUnit, opts.logx), logLabel(d.YUnit, opts.logy), true)
	fig := &figure{plot: p}
	for i, pt := range d.Points {
		if opts.logx && pt.X.Min <= 0 {
			return nil, fmt.Errorf("-logx needs positive values, got %v %s for %s=%s", pt.X.Min, d.XUnit, d.SeriesKey, pt.Label)
		}
		if opts.logy && pt.Y.Min <= 0 {
			return nil, fmt.Errorf("-logy needs positive values, got %v %s for %s=%s", pt.Y.Min, d.YUnit, d.SeriesKey, pt.Label)
		}
		clr := plotutil.Color(i)
		xys := plotter.XYs{{X: pt.X.Median, Y: pt.Y.Median}}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", d.SeriesKey, pt.Label, err)
		}
		sc.Color, sc.Shape, sc.Radius = clr, plotutil.Shape(i), vg.Points(4)
		p.Add(sc)
		if pt.X.N > 1 || pt.Y.N > 1 {
			xe, err := plotter.NewXErrorBars(struct {
				plotter.XYs
				plotter.XErrors
			}{xys, plotter.XErrors{{Low: pt.X.Median - pt.X.Min, High: pt.X.Max - pt.X.Median}}})
			if err != nil {
				return nil, err
			}
			ye, err := plotter.NewYErrorBars(errorXYs{xys, plotter.YErrors{{Low: pt.Y.Median - pt.Y.Min, High: pt.Y.Max - pt.Y.Median}}})
			if err != nil {
				return nil, err
			}
			xe.Color, ye.Color = clr, clr
			xe.CapWidth, ye.CapWidth = vg.Points(5), vg.Points(5)
			p.Add(xe, ye)
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: []string{pt.Label}})
		if err != nil {
			return nil, err
		}
		lb.TextStyle[0].Font = p.X.Tick.Label.Font
		lb.TextStyle[0].Font.Size = 10
		lb.TextStyle[0].Color = darken(clr)
		lb.Offset = vg.Point{X: 6, Y: 4}
		p.Add(lb)
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

// darken makes a palette colour dark enough to read as text.
func darken(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.RGBA{R: uint8(r >> 9), G: uint8(g >> 9), B: uint8(b >> 9), A: 255}
}

// countRange gives the fewest and most repetitions behind a point.
func countRange(t *table) [2]int {
	lo, hi := math.MaxInt, 0
	for _, s := range t.Series {
		for _, p := range s.Points {
			lo, hi = min(lo, p.Y.N), max(hi, p.Y.N)
		}
	}
	return [2]int{lo, hi}
}

// caption describes the machine, the statistics, the filter and the note.
func caption(used []result, opts options, n [2]int) []string {
	cpu, platform := machine(used)
	var first []string
	if cpu != "" {
		first = append(first, "cpu: "+cpu)
	}
	if platform != "" {
		first = append(first, platform)
	}
	if opts.note != "" {
		first = append(first, opts.note)
	}
	runs := fmt.Sprintf("%d", n[0])
	if n[0] != n[1] {
		runs = fmt.Sprintf("%d–%d", n[0], n[1])
	}
	second := "one run per point"
	if n[1] > 1 {
		second = "median of " + runs + " runs, bars span min–max"
	}
	if len(opts.filters) > 0 {
		second += "; filter " + opts.filters.String()
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

	if f.entries == 0 {
		f.plot.Draw(body)
		return
	}
	r := f.legend.Rectangle(body)
	lw := r.Max.X - r.Min.X
	plotArea := draw.Crop(body, 0, -(lw + 2*pad), 0, 0)
	data := f.plot.DataCanvas(plotArea)
	f.plot.Draw(plotArea)
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
