package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/toolharness/toolharness/bench"
)

// Table writes the terminal table: one row per group, rates with their
// intervals. Columns that are the same for every group (format and mode
// of a corpus run) move to a header line, and the retry column is left out
// when no case was retried.
func Table(w io.Writer, s bench.Summary) error {
	// With no groups at all the columns are those of a one-cell run, so
	// an empty input prints the same columns as a corpus.
	same := func(get func(bench.Group) string) bool {
		for _, g := range s.Groups {
			if get(g) != get(s.Groups[0]) {
				return false
			}
		}
		return true
	}
	sameFormat := same(func(g bench.Group) string { return g.Format })
	sameMode := same(func(g bench.Group) string { return g.Mode })
	retried := false
	for _, g := range s.Groups {
		retried = retried || g.MeanRetries > 0
	}
	head := []string{"model"}
	left := 1
	if !sameFormat {
		head = append(head, "format")
		left++
	}
	if !sameMode {
		head = append(head, "mode")
		left++
	}
	// Without retries (recorded outputs) first-try success is just success.
	success := "success"
	if retried {
		success = "first try"
	}
	head = append(head, "n", "errors", "strict fail", "lenient fail", "schema inv.", "wrong tool", "missed call", "false call", success)
	if retried {
		head = append(head, "≤3 retries")
	}
	rows := [][]string{head}
	for _, g := range s.Groups {
		row := []string{g.Model}
		if !sameFormat {
			row = append(row, g.Format)
		}
		if !sameMode {
			row = append(row, g.Mode)
		}
		row = append(row, fmt.Sprint(g.Cases), fmt.Sprint(g.Errors), Pct(g.StrictFailure), Pct(g.LenientFailure), Pct(g.SchemaInvalid),
			Pct(g.WrongTool), Pct(g.MissedCall), Pct(g.FalseCall), Pct(g.FirstTry))
		if retried {
			row = append(row, Pct(g.Within3))
		}
		rows = append(rows, row)
	}
	if len(s.Groups) > 0 && (sameFormat || sameMode) {
		var parts []string
		if sameFormat {
			parts = append(parts, "format "+s.Groups[0].Format)
		}
		if sameMode {
			parts = append(parts, "mode "+s.Groups[0].Mode)
		}
		fmt.Fprintf(w, "%s; rates in %% with 95%% Wilson intervals\n", strings.Join(parts, ", "))
	}
	if err := writeAligned(w, rows, left); err != nil {
		return err
	}
	if err := repairNote(w, s.Groups); err != nil {
		return err
	}
	return errorNote(w, s.Groups)
}

// repairNote lists, under a table, the lenient parser's repairs of each
// group that made any.
func repairNote(w io.Writer, groups []bench.Group) error {
	for _, g := range groups {
		if len(g.Repairs) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "repairs (%s %s %s): %s\n", g.Model, g.Format, g.Mode, kinds(g.Repairs)); err != nil {
			return err
		}
	}
	return nil
}

// errorNote says, under a table, how many cases failed in the harness or
// server: they are in no rate, and a reader must not take "–" for zero.
// (A case ends at its first error, so error records count cases.)
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

// CompareTable writes one model's formats side by side: one column per
// format, one row per metric, then the pairwise verdicts.
func CompareTable(w io.Writer, s bench.Summary, model string) error {
	var groups []bench.Group
	for _, g := range s.Groups {
		if g.Model == model {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return fmt.Errorf("report: no results for model %q", model)
	}
	head := []string{"metric"}
	for _, g := range groups {
		name := g.Format
		if g.Mode != "" {
			name += " (" + g.Mode + ")"
		}
		head = append(head, name)
	}
	rows := [][]string{head}
	cases := []string{"cases"}
	for _, g := range groups {
		cases = append(cases, fmt.Sprint(g.Cases))
	}
	rows = append(rows, cases)
	errs := []string{"errors"}
	for _, g := range groups {
		errs = append(errs, fmt.Sprint(g.Errors))
	}
	rows = append(rows, errs)
	for _, c := range rateColumns {
		row := []string{c.title}
		for _, g := range groups {
			row = append(row, Pct(c.get(g)))
		}
		rows = append(rows, row)
	}
	mean := []string{"mean retries"}
	for _, g := range groups {
		mean = append(mean, MeanRetries(g))
	}
	rows = append(rows, mean)
	if err := writeAligned(w, rows, 1); err != nil {
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
		fmt.Fprintf(w, "  %-22s %s vs %s: %s vs %s, p=%.3g — %s\n", c.Metric, c.FormatA, c.FormatB,
			shortPct(c.Test.A), shortPct(c.Test.B), c.Test.P, c.Verdict())
	}
	return nil
}

// writeAligned pads columns; the first leftCols are left-aligned, the
// rest right-aligned.
func writeAligned(w io.Writer, rows [][]string, leftCols int) error {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for ri, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < leftCols {
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad + c)
			}
		}
		b.WriteByte('\n')
		if ri == 0 {
			total := 0
			for i := range r {
				total += widths[i] + 2
			}
			b.WriteString(strings.Repeat("─", total-2) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
