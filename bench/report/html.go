package report

import (
	_ "embed"
	"fmt"
	"html"
	"io"
	"strings"
	"text/template"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/stats"
)

//go:embed report.html.tmpl
var htmlTemplate string

// The page is built with text/template (the project renders every
// template with it); every value is escaped explicitly with the html
// function or by the chart builders.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": Pct,
	// cell is a rate for a table cell: the estimate, k/n and the
	// interval below.
	"cell": func(r stats.Rate) string {
		if !r.Measured() {
			return "–"
		}
		return fmt.Sprintf(`%.1f%%<br><small>%d/%d</small><br><small>%.1f–%.1f</small>`, 100*r.P, r.K, r.N, 100*r.Lo, 100*r.Hi)
	},
	"esc":    html.EscapeString,
	"format": FormatLabel,
	"kinds": func(m map[string]int) string {
		return orDash(kinds(m))
	},
	"retries": MeanRetries,
}).Parse(htmlTemplate))

type pageData struct {
	Meta    Meta
	Summary bench.Summary
	Rates   []rateColumn
	// Success are the first-try and retry columns, shown apart when
	// some case could be retried (ShowRetries); Run: the manifest's lines.
	Success      []rateColumn
	ShowRetries  bool
	Run          []string
	FailChart    string
	RetryChart   string
	LatencyChart string
}

// HTML writes report.html. A section with nothing to show is left out:
// retries when no case could be retried (recorded outputs,
// --max-retries 0), latency when nothing was timed.
func HTML(w io.Writer, s bench.Summary, m Meta) error {
	if m.Title == "" {
		m.Title = "toolharness benchmark"
	}
	retries := retryBudget(s, m)
	cols := summaryColumns(s, m)
	d := pageData{Meta: m, Summary: s, Rates: cols, ShowRetries: retries > 0, FailChart: failureChart(s.Groups)}
	if retries > 0 {
		// The summary keeps first-try success; the rest is a table apart,
		// so that neither is wider than the page.
		n := len(cols) - retries
		d.Rates, d.Success = cols[:n], cols[n-1:]
	}
	if m.Manifest != nil {
		d.Run = m.Manifest.Lines()
	}
	if retries > 0 {
		d.RetryChart = retryChart(s.Groups, retries)
	}
	if hasTimings(s) {
		d.LatencyChart = latencyChart(s.Groups)
	}
	return page.Execute(w, d)
}

// labeler names groups in the charts, leaving out the format or mode
// when every group shares it (recorded outputs: "auto", "recorded").
type labeler struct{ format, mode bool }

func newLabeler(groups []bench.Group) labeler {
	l := labeler{}
	for _, g := range groups {
		l.format = l.format || FormatLabel(g) != FormatLabel(groups[0])
		l.mode = l.mode || g.Mode != groups[0].Mode
	}
	return l
}

// maxLabel is what fits left of the plot at the chart's font size.
const maxLabel = 46

func (l labeler) label(g bench.Group) string {
	parts := []string{g.Model}
	if l.format {
		parts = append(parts, FormatLabel(g))
	}
	if l.mode {
		parts = append(parts, g.Mode)
	}
	s := strings.Join(parts, " · ")
	if r := []rune(s); len(r) > maxLabel {
		s = "…" + string(r[len(r)-maxLabel+1:])
	}
	return s
}

func groupLabel(g bench.Group) string {
	return strings.Join([]string{g.Model, FormatLabel(g), g.Mode}, " · ")
}

const (
	chartWidth = 960
	labelWidth = 330
	plotWidth  = chartWidth - labelWidth - 160
	axisTop    = 34
)

// svgOpen starts a chart with a title and a 0–100% (or 0–max) axis.
func svgOpen(b *strings.Builder, id, title string, height int, ticks []string) {
	fmt.Fprintf(b, `<svg id="%s" class="chart" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`,
		id, html.EscapeString(title), chartWidth, height, chartWidth, height)
	fmt.Fprintf(b, `<title>%s</title>`, html.EscapeString(title))
	for i, t := range ticks {
		x := labelWidth + plotWidth*i/(len(ticks)-1)
		fmt.Fprintf(b, `<line class="grid" x1="%d" y1="%d" x2="%d" y2="%d"/>`, x, axisTop-6, x, height-6)
		fmt.Fprintf(b, `<text class="tick" x="%d" y="%d" text-anchor="middle">%s</text>`, x, axisTop-10, html.EscapeString(t))
	}
}

func pctTicks() []string { return []string{"0%", "25%", "50%", "75%", "100%"} }

func xOf(p float64) float64 { return float64(labelWidth) + p*float64(plotWidth) }

// bar draws one horizontal bar for rate r with its interval whisker.
func bar(b *strings.Builder, class string, y, h int, r stats.Rate, label string) {
	if !r.Measured() {
		fmt.Fprintf(b, `<text class="na" x="%d" y="%d">not measured</text>`, labelWidth+4, y+h-2)
		return
	}
	w := r.P * float64(plotWidth)
	fmt.Fprintf(b, `<rect class="bar %s" x="%d" y="%d" width="%.1f" height="%d"><title>%s %s (k=%d, n=%d)</title></rect>`,
		class, labelWidth, y, w, h, html.EscapeString(label), html.EscapeString(Pct(r)), r.K, r.N)
	mid := y + h/2
	fmt.Fprintf(b, `<line class="ci" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`, xOf(r.Lo), mid, xOf(r.Hi), mid)
	fmt.Fprintf(b, `<line class="ci" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><line class="ci" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`,
		xOf(r.Lo), y+1, xOf(r.Lo), y+h-1, xOf(r.Hi), y+1, xOf(r.Hi), y+h-1)
	fmt.Fprintf(b, `<text class="val" x="%.1f" y="%d">%.1f%%</text>`, xOf(r.Hi)+5, y+h-2, 100*r.P)
}

func rowLabel(b *strings.Builder, y int, text, full string) {
	fmt.Fprintf(b, `<text class="label" x="%d" y="%d" text-anchor="end"><title>%s</title>%s</text>`,
		labelWidth-8, y, html.EscapeString(full), html.EscapeString(text))
}

func legend(b *strings.Builder, y int, items [][2]string) {
	x := labelWidth
	for _, it := range items {
		fmt.Fprintf(b, `<rect class="bar %s" x="%d" y="%d" width="12" height="12"/><text class="legend" x="%d" y="%d">%s</text>`,
			it[0], x, y, x+16, y+11, html.EscapeString(it[1]))
		x += 30 + 8*len(it[1])
	}
}

// failureChart: strict and lenient parse-failure rate per group.
func failureChart(groups []bench.Group) string {
	var b strings.Builder
	const bh, gap = 11, 10
	height := axisTop + len(groups)*(2*bh+gap) + 30
	svgOpen(&b, "chart-failure", "Parse-failure rate by model and format (strict vs lenient, 95% CI)", height, pctTicks())
	y := axisTop
	lb := newLabeler(groups)
	for _, g := range groups {
		rowLabel(&b, y+bh+4, lb.label(g), groupLabel(g))
		bar(&b, "strict", y, bh, g.StrictFailure, groupLabel(g)+" strict")
		bar(&b, "lenient", y+bh, bh, g.LenientFailure, groupLabel(g)+" lenient")
		y += 2*bh + gap
	}
	legend(&b, height-20, [][2]string{{"strict", "strict parser"}, {"lenient", "lenient parser (repairs)"}})
	b.WriteString(`</svg>`)
	return b.String()
}

// retryChart: share of cases succeeding first try, after 1 … retries
// retries (at most 3), and failing, as one stacked bar per group.
func retryChart(groups []bench.Group, retries int) string {
	var b strings.Builder
	const bh, gap = 16, 8
	height := axisTop + len(groups)*(bh+gap) + 30
	svgOpen(&b, "chart-retries", "Case outcome: success on first try and after retries", height, pctTicks())
	y := axisTop
	lb := newLabeler(groups)
	for _, g := range groups {
		rowLabel(&b, y+bh-3, lb.label(g), groupLabel(g))
		if g.FirstTry.N == 0 {
			fmt.Fprintf(&b, `<text class="na" x="%d" y="%d">no cases</text>`, labelWidth+4, y+bh-3)
			y += bh + gap
			continue
		}
		within := []float64{g.FirstTry.P, g.Within1.P, g.Within2.P, g.Within3.P}[:retries+1]
		segs := []struct {
			class string
			p     float64
			name  string
		}{{"first", g.FirstTry.P, "first try"}}
		for k := 1; k <= retries; k++ {
			segs = append(segs, struct {
				class string
				p     float64
				name  string
			}{fmt.Sprintf("r%d", k), within[k] - within[k-1], retryWords(k)})
		}
		segs = append(segs, struct {
			class string
			p     float64
			name  string
		}{"failed", 1 - within[retries], "failed"})
		x := float64(labelWidth)
		for _, s := range segs {
			if s.p <= 0 {
				continue
			}
			w := s.p * float64(plotWidth)
			fmt.Fprintf(&b, `<rect class="bar %s" x="%.1f" y="%d" width="%.1f" height="%d"><title>%s: %s %.1f%% of %d cases</title></rect>`,
				s.class, x, y, w, bh, html.EscapeString(groupLabel(g)), s.name, 100*s.p, g.FirstTry.N)
			x += w
		}
		fmt.Fprintf(&b, `<text class="val" x="%d" y="%d">%.0f%% first · %.2f retries</text>`,
			labelWidth+plotWidth+6, y+bh-3, 100*g.FirstTry.P, g.MeanRetries)
		y += bh + gap
	}
	items := [][2]string{{"first", "first try"}}
	for k := 1; k <= retries; k++ {
		items = append(items, [2]string{fmt.Sprintf("r%d", k), strings.TrimPrefix(retryWords(k), "after ")})
	}
	legend(&b, height-20, append(items, [2]string{"failed", "failed"}))
	b.WriteString(`</svg>`)
	return b.String()
}

func retryWords(k int) string {
	if k == 1 {
		return "after 1 retry"
	}
	return fmt.Sprintf("after %d retries", k)
}

// latencyChart: p50 and p95 total time per group, on a shared scale.
func latencyChart(groups []bench.Group) string {
	var b strings.Builder
	maxMs := 0.0
	for _, g := range groups {
		maxMs = max(maxMs, g.TotalP95, g.TotalP50)
	}
	const bh, gap = 11, 10
	scale := niceCeil(maxMs)
	ticks := []string{"0", fmtMs(scale / 4), fmtMs(scale / 2), fmtMs(3 * scale / 4), fmtMs(scale)}
	height := axisTop + len(groups)*(2*bh+gap) + 30
	svgOpen(&b, "chart-latency", "Latency: total time per attempt, p50 and p95", height, ticks)
	y := axisTop
	lb := newLabeler(groups)
	for _, g := range groups {
		rowLabel(&b, y+bh+4, lb.label(g), groupLabel(g))
		for i, v := range []float64{g.TotalP50, g.TotalP95} {
			class, name := "p50", "p50"
			if i == 1 {
				class, name = "p95", "p95"
			}
			w := v / scale * float64(plotWidth)
			fmt.Fprintf(&b, `<rect class="bar %s" x="%d" y="%d" width="%.1f" height="%d"><title>%s %s %s (TTFT p50 %s)</title></rect>`,
				class, labelWidth, y+i*bh, w, bh, html.EscapeString(groupLabel(g)), name, fmtMs(v), fmtMs(g.TTFTP50))
			fmt.Fprintf(&b, `<text class="val" x="%.1f" y="%d">%s</text>`, float64(labelWidth)+w+5, y+i*bh+bh-2, fmtMs(v))
		}
		y += 2*bh + gap
	}
	legend(&b, height-20, [][2]string{{"p50", "median"}, {"p95", "95th percentile"}})
	b.WriteString(`</svg>`)
	return b.String()
}

func niceCeil(x float64) float64 {
	step := 1.0
	for step*10 < x {
		step *= 10
	}
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step*m >= x {
			return step * m
		}
	}
	return step * 10
}

func fmtMs(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
