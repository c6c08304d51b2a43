package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/stats"
)

// TableWidth is the width the terminal tables fit in.
const TableWidth = 120

// Table writes the terminal tables, which fit TableWidth columns: the
// manifest's lines, then parse rates, call rates and (when any retry was
// possible) success after retries, one row per group. A rate shows its
// k/n with the interval on the line below. Columns that are the same for
// every group (format and mode of a corpus run) move to a header line.
func Table(w io.Writer, s bench.Summary, m Meta) error {
	var b strings.Builder
	if m.Manifest != nil {
		for _, l := range m.Manifest.Lines() {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	names, fixed := groupNames(s.Groups)
	if fixed != "" {
		b.WriteString(fixed + "; ")
	}
	b.WriteString("rates in % with k/n, the 95% Wilson interval below\n")
	retries := retryBudget(s, m)
	success := "success"
	if retries > 0 {
		success = "first try"
	}
	parse := []column{
		{"cases", func(g bench.Group) string { return fmt.Sprint(g.Cases) }},
		{"errors", func(g bench.Group) string { return fmt.Sprint(g.Errors) }},
		rateCol("strict fail", func(g bench.Group) stats.Rate { return g.StrictFailure }),
		rateCol("lenient fail", func(g bench.Group) stats.Rate { return g.LenientFailure }),
		rateCol("schema invalid", func(g bench.Group) stats.Rate { return g.SchemaInvalid }),
	}
	if anyMeasured(s.Groups, func(g bench.Group) stats.Rate { return g.Truncated }) {
		parse = append(parse, rateCol("truncated", func(g bench.Group) stats.Rate { return g.Truncated }))
	}
	calls := []column{
		rateCol("wrong tool", func(g bench.Group) stats.Rate { return g.WrongTool }),
		rateCol("missed call", func(g bench.Group) stats.Rate { return g.MissedCall }),
		rateCol("false call", func(g bench.Group) stats.Rate { return g.FalseCall }),
		rateCol(success, func(g bench.Group) stats.Rate { return g.FirstTry }),
	}
	tables := [][]column{parse, calls}
	if retries > 0 {
		var after []column
		for _, c := range retryColumns(retries) {
			after = append(after, rateCol(c.title, c.get))
		}
		tables = append(tables, append(after, column{"mean retries", MeanRetries}))
	}
	for i, cols := range tables {
		if i > 0 {
			b.WriteString("\n")
		}
		writeGroupTable(&b, s.Groups, names, cols)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := repairNote(w, s.Groups); err != nil {
		return err
	}
	return errorNote(w, s.Groups)
}

// column is a table column of groups.
type column struct {
	title string
	cell  func(bench.Group) string
}

func rateCol(title string, get func(bench.Group) stats.Rate) column {
	return column{title, func(g bench.Group) string { return rateCell(get(g)) }}
}

// rateCell is a rate on two lines: the estimate with k/n, the interval.
func rateCell(r stats.Rate) string {
	if !r.Measured() {
		return "–"
	}
	return fmt.Sprintf("%.1f%% %d/%d\n[%.1f–%.1f]", 100*r.P, r.K, r.N, 100*r.Lo, 100*r.Hi)
}

func anyMeasured(groups []bench.Group, get func(bench.Group) stats.Rate) bool {
	return slices.ContainsFunc(groups, func(g bench.Group) bool { return get(g).Measured() })
}

// retryBudget is how many retries a case could have, at most 3 (the
// metrics stop there): the run's --max-retries where the manifest says
// it, else the most retries a case had.
func retryBudget(s bench.Summary, m Meta) int {
	if m.Manifest != nil && m.Manifest.MaxRetries != nil {
		return min(*m.Manifest.MaxRetries, 3)
	}
	most := 0
	for _, g := range s.Groups {
		most = max(most, g.MostRetries)
	}
	return min(most, 3)
}

// retryColumns are first try and success within 1…n retries.
func retryColumns(n int) []rateColumn {
	out := []rateColumn{rateColumns[6]}
	return append(out, rateColumns[7:7+n]...)
}

// FormatLabel names a group's format: "native=hermes" when it resolved
// to another.
func FormatLabel(g bench.Group) string { return g.Label() }

// groupNames are the name columns of each group (model, and format and
// mode where they vary) and, for what every group shares, a header line.
func groupNames(groups []bench.Group) (names [][]string, fixed string) {
	same := func(get func(bench.Group) string) bool {
		return !slices.ContainsFunc(groups, func(g bench.Group) bool { return get(g) != get(groups[0]) })
	}
	sameFormat := same(FormatLabel)
	sameMode := same(func(g bench.Group) string { return g.Mode })
	names = [][]string{{"model"}}
	if !sameFormat {
		names[0] = append(names[0], "format")
	}
	if !sameMode {
		names[0] = append(names[0], "mode")
	}
	for _, g := range groups {
		row := []string{g.Model}
		if !sameFormat {
			row = append(row, FormatLabel(g))
		}
		if !sameMode {
			row = append(row, g.Mode)
		}
		names = append(names, row)
	}
	var parts []string
	if len(groups) > 0 && sameFormat {
		parts = append(parts, "format "+FormatLabel(groups[0]))
	}
	if len(groups) > 0 && sameMode {
		parts = append(parts, "mode "+groups[0].Mode)
	}
	return names, strings.Join(parts, ", ")
}

// writeGroupTable writes one table: the name columns, then cols.
func writeGroupTable(b *strings.Builder, groups []bench.Group, names [][]string, cols []column) {
	rows := make([][]string, len(names))
	for i := range names {
		rows[i] = slices.Clone(names[i])
		for _, c := range cols {
			if i == 0 {
				rows[i] = append(rows[i], c.title)
			} else {
				rows[i] = append(rows[i], c.cell(groups[i-1]))
			}
		}
	}
	writeAligned(b, rows, len(names[0]))
}

// repairNote lists, under the tables, the lenient parser's repairs on
// first attempts of each group that made any, wrapped to TableWidth.
func repairNote(w io.Writer, groups []bench.Group) error {
	var b strings.Builder
	for _, g := range groups {
		if len(g.Repairs) == 0 {
			continue
		}
		line := fmt.Sprintf("repairs (%s, %s, %s):", g.Model, FormatLabel(g), g.Mode)
		for _, k := range strings.Fields(kinds(g.Repairs)) {
			if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(k) > TableWidth {
				b.WriteString(line + "\n")
				line = "   "
			}
			line += " " + k
		}
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// errorNote says, under a table, how many cases failed in the harness or
// server: they are in no rate, and a reader must not take "–" for zero.
func errorNote(w io.Writer, groups []bench.Group) error {
	errs, cases := 0, 0
	for _, g := range groups {
		errs += g.Errors
		cases += g.Cases
	}
	if errs == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "%d of %d case(s) failed with a harness or server error and are left out of every rate\n", errs, cases)
	return err
}

// NoModelError is a compare of a model the results do not have.
type NoModelError struct {
	Model  string
	Models []string // the models the results have
}

func (e *NoModelError) Error() string {
	if len(e.Models) == 0 {
		return fmt.Sprintf("report: no results for model %q: the results hold no model", e.Model)
	}
	return fmt.Sprintf("report: no results for model %q; the results have %s", e.Model, strings.Join(e.Models, ", "))
}

// CompareTable writes one model's formats side by side, within
// TableWidth for up to five formats: one column per format and mode, one
// row per metric (a rate with its k/n, the interval below), then the
// pairwise verdicts.
func CompareTable(w io.Writer, s bench.Summary, model string, m Meta) error {
	var groups []bench.Group
	var models []string
	for _, g := range s.Groups {
		if g.Model == model {
			groups = append(groups, g)
		}
		if !slices.Contains(models, g.Model) {
			models = append(models, g.Model)
		}
	}
	if len(groups) == 0 {
		return &NoModelError{Model: model, Models: models}
	}
	var b strings.Builder
	if m.Manifest != nil {
		for _, l := range m.Manifest.Lines() {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	head := []string{"metric"}
	for _, g := range groups {
		head = append(head, FormatLabel(g)+" ("+g.Mode+")")
	}
	rows := [][]string{head}
	row := func(title string, cell func(bench.Group) string) {
		r := []string{title}
		for _, g := range groups {
			r = append(r, cell(g))
		}
		rows = append(rows, r)
	}
	row("cases", func(g bench.Group) string { return fmt.Sprint(g.Cases) })
	row("errors", func(g bench.Group) string { return fmt.Sprint(g.Errors) })
	retries := retryBudget(s, m)
	for _, c := range rateColumns[:6] {
		row(c.title, func(g bench.Group) string { return rateCell(c.get(g)) })
	}
	if anyMeasured(groups, func(g bench.Group) stats.Rate { return g.Truncated }) {
		row("truncated", func(g bench.Group) string { return rateCell(g.Truncated) })
	}
	for _, c := range retryColumns(retries) {
		row(c.title, func(g bench.Group) string { return rateCell(c.get(g)) })
	}
	if retries > 0 {
		row("mean retries", MeanRetries)
	}
	writeAligned(&b, rows, 1)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := errorNote(w, groups); err != nil {
		return err
	}
	var any bool
	for _, c := range s.Comparisons {
		if c.Model != model {
			continue
		}
		if !any {
			fmt.Fprintln(w, "\nverdicts (two-proportion z-test, 5%):")
			any = true
		}
		fmt.Fprintf(w, "  %s, %s: %s %s vs %s %s, p=%.3g\n    %s\n", c.Metric, c.ModeLabel(), c.LabelA(), shortPct(c.Test.A),
			c.LabelB(), shortPct(c.Test.B), c.Test.P, c.Verdict())
	}
	return nil
}

// writeAligned pads columns; the first leftCols are left-aligned, the
// rest right-aligned. A cell may hold several lines: its row takes as
// many. A table wider than TableWidth cuts the first column's longest
// values from the front ("…tail"), where names differ least.
func writeAligned(b *strings.Builder, rows [][]string, leftCols int) {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			for _, l := range strings.Split(c, "\n") {
				widths[i] = max(widths[i], utf8.RuneCountInString(l))
			}
		}
	}
	total := 0
	for _, wd := range widths {
		total += wd + 2
	}
	if over := total - 2 - TableWidth; over > 0 && widths[0]-over >= 12 {
		widths[0] -= over
	}
	for ri, r := range rows {
		lines := 1
		for _, c := range r {
			lines = max(lines, strings.Count(c, "\n")+1)
		}
		for li := 0; li < lines; li++ {
			var line strings.Builder
			for i, c := range r {
				parts := strings.Split(c, "\n")
				text := ""
				if li < len(parts) {
					text = parts[li]
				}
				if i == 0 {
					text = cutFront(text, widths[0])
				}
				pad := strings.Repeat(" ", max(widths[i]-utf8.RuneCountInString(text), 0))
				if i > 0 {
					line.WriteString("  ")
				}
				if i < leftCols {
					line.WriteString(text + pad)
				} else {
					line.WriteString(pad + text)
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		}
		if ri == 0 {
			n := 0
			for i := range r {
				n += widths[i] + 2
			}
			b.WriteString(strings.Repeat("─", n-2) + "\n")
		}
	}
}

// cutFront shortens s to n runes, keeping its end.
func cutFront(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
