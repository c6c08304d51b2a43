package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/toolharness/toolharness/bench"
	"github.com/toolharness/toolharness/bench/stats"
)

// Meta describes where a summary came from.
type Meta struct {
	Title string `json:"title"`
	// Source is a line saying what was measured (command, input file).
	Source string `json:"source,omitempty"`
	// Generated is a timestamp; empty in tests so goldens are stable.
	Generated string `json:"generated,omitempty"`
	// Manifest is what produced the results, when they have one.
	Manifest *bench.Manifest `json:"manifest,omitempty"`
}

// The output file names.
const (
	SummaryJSON = "summary.json"
	SummaryCSV  = "summary.csv"
	SummaryMD   = "summary.md"
	ReportHTML  = "report.html"
)

// WriteAll writes the four report files into dir.
func WriteAll(dir string, s bench.Summary, m Meta) error {
	files := []struct {
		name  string
		write func(io.Writer, bench.Summary, Meta) error
	}{
		{SummaryJSON, JSON}, {SummaryCSV, CSV}, {SummaryMD, Markdown}, {ReportHTML, HTML},
	}
	for _, f := range files {
		var b bytes.Buffer
		if err := f.write(&b, s, m); err != nil {
			return fmt.Errorf("report: %s: %w", f.name, err)
		}
		if err := writeFileAtomic(filepath.Join(dir, f.name), b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// JSON writes the summary with its meta, indented, without HTML escaping.
func JSON(w io.Writer, s bench.Summary, m Meta) error {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	return e.Encode(struct {
		Meta Meta `json:"meta"`
		bench.Summary
	}{m, s})
}

// rateColumn is a rate of a group with its column name.
type rateColumn struct {
	name  string
	title string
	get   func(g bench.Group) stats.Rate
}

// Title and Get serve the HTML template.
func (c rateColumn) Title() string                { return c.title }
func (c rateColumn) Get(g bench.Group) stats.Rate { return c.get(g) }

var rateColumns = []rateColumn{
	{"strict_parse_failure", "strict fail", func(g bench.Group) stats.Rate { return g.StrictFailure }},
	{"lenient_parse_failure", "lenient fail", func(g bench.Group) stats.Rate { return g.LenientFailure }},
	{"schema_invalid", "schema invalid", func(g bench.Group) stats.Rate { return g.SchemaInvalid }},
	{"wrong_tool", "wrong tool", func(g bench.Group) stats.Rate { return g.WrongTool }},
	{"missed_call", "missed call", func(g bench.Group) stats.Rate { return g.MissedCall }},
	{"false_call", "false call", func(g bench.Group) stats.Rate { return g.FalseCall }},
	{"first_try_success", "first try", func(g bench.Group) stats.Rate { return g.FirstTry }},
	{"success_within_1_retry", "≤1 retry", func(g bench.Group) stats.Rate { return g.Within1 }},
	{"success_within_2_retries", "≤2 retries", func(g bench.Group) stats.Rate { return g.Within2 }},
	{"success_within_3_retries", "≤3 retries", func(g bench.Group) stats.Rate { return g.Within3 }},
}

// CSV writes one row per group; each rate as value, lo, hi, k, n columns
// (empty when not measured).
func CSV(w io.Writer, s bench.Summary, _ Meta) error {
	cw := csv.NewWriter(w)
	head := []string{"model", "format", "format_used", "mode", "cases", "attempts", "errors"}
	csvCols := append(slices.Clone(rateColumns), truncatedColumn)
	for _, c := range csvCols {
		head = append(head, c.name, c.name+"_lo", c.name+"_hi", c.name+"_k", c.name+"_n")
	}
	head = append(head, "mean_retries", "prompt_tokens_p50", "prompt_tokens_p90", "generated_tokens_p50",
		"generated_tokens_p90", "ttft_ms_p50", "ttft_ms_p95", "total_ms_p50", "total_ms_p95", "cache_reuse", "failure_kinds")
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	for _, g := range s.Groups {
		row := []string{g.Model, g.Format, g.FormatUsed, g.Mode, strconv.Itoa(g.Cases), strconv.Itoa(g.Attempts), strconv.Itoa(g.Errors)}
		for _, c := range csvCols {
			r := c.get(g)
			if !r.Measured() {
				row = append(row, "", "", "", "", "0")
				continue
			}
			row = append(row, f(r.P), f(r.Lo), f(r.Hi), strconv.Itoa(r.K), strconv.Itoa(r.N))
		}
		cache := ""
		if g.CacheReuse != nil {
			cache = f(*g.CacheReuse)
		}
		mean := ""
		if g.FirstTry.Measured() { // the same cases as the retry counts
			mean = f(g.MeanRetries)
		}
		// Percentiles are over positive samples only: 0 means none.
		pct := func(x float64) string {
			if x == 0 {
				return ""
			}
			return f(x)
		}
		row = append(row, mean, pct(g.PromptTokensP50), pct(g.PromptTokensP90), pct(g.GeneratedTokensP50),
			pct(g.GeneratedTokensP90), pct(g.TTFTP50), pct(g.TTFTP95), pct(g.TotalP50), pct(g.TotalP95), cache, kinds(g.FailureKinds))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// kinds formats a count map as "a=3 b=1", most frequent first.
func kinds(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range m {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	var parts []string
	for _, e := range list {
		parts = append(parts, fmt.Sprintf("%s=%d", e.k, e.v))
	}
	return strings.Join(parts, " ")
}

// PctKN formats a rate as "12.3% (5/41) [8.1–17.9]", or "–" when not
// measured.
func PctKN(r stats.Rate) string {
	if !r.Measured() {
		return "–"
	}
	return fmt.Sprintf("%.1f%% (%d/%d) [%.1f–%.1f]", 100*r.P, r.K, r.N, 100*r.Lo, 100*r.Hi)
}

// Pct formats a rate as "12.3% [8.1–17.9]", or "–" when not measured.
func Pct(r stats.Rate) string {
	if !r.Measured() {
		return "–"
	}
	return fmt.Sprintf("%.1f%% [%.1f–%.1f]", 100*r.P, 100*r.Lo, 100*r.Hi)
}

// MeanRetries formats a group's mean retries, "–" when no case was
// scored (every case failed with an error, or none had an expectation).
func MeanRetries(g bench.Group) string {
	if !g.FirstTry.Measured() {
		return "–"
	}
	return fmt.Sprintf("%.2f", g.MeanRetries)
}

// shortPct is the point estimate only.
func shortPct(r stats.Rate) string {
	if !r.Measured() {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*r.P)
}

// Markdown writes the summary tables.
func Markdown(w io.Writer, s bench.Summary, m Meta) error {
	var b strings.Builder
	title := m.Title
	if title == "" {
		title = "toolharness benchmark"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if m.Source != "" {
		fmt.Fprintf(&b, "%s\n\n", m.Source)
	}
	if m.Manifest != nil {
		for _, l := range m.Manifest.Lines() {
			fmt.Fprintf(&b, "- %s\n", mdCell(l))
		}
		b.WriteString("\n")
	}
	b.WriteString("Rates are percentages with k/n and 95% Wilson intervals; – means no case of that kind. Cases that failed with a harness or server error (errors) are in no rate.\n\n")
	cols := summaryColumns(s, m)
	b.WriteString("| model | format | mode | cases | errors |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.title)
	}
	retries := retryBudget(s, m) > 0
	if retries {
		b.WriteString(" mean retries |")
	}
	b.WriteString("\n|---|---|---|---:|---:|" + strings.Repeat("---:|", len(cols)))
	if retries {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, g := range s.Groups {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d |", mdCell(g.Model), mdCell(FormatLabel(g)), mdCell(g.Mode), g.Cases, g.Errors)
		for _, c := range cols {
			fmt.Fprintf(&b, " %s |", PctKN(c.get(g)))
		}
		if retries {
			fmt.Fprintf(&b, " %s |", MeanRetries(g))
		}
		b.WriteString("\n")
	}
	if hasTimings(s) {
		b.WriteString("\n## Tokens and latency\n\n| model | format | mode | prompt tok p50 | generated tok p50 / p90 | TTFT ms p50 / p95 | total ms p50 / p95 | cache reuse |\n|---|---|---|---:|---:|---:|---:|---:|\n")
		for _, g := range s.Groups {
			cache := "–"
			if g.CacheReuse != nil {
				cache = fmt.Sprintf("%.1f%%", 100**g.CacheReuse)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.0f | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | %s |\n",
				mdCell(g.Model), mdCell(FormatLabel(g)), mdCell(g.Mode), g.PromptTokensP50, g.GeneratedTokensP50, g.GeneratedTokensP90,
				g.TTFTP50, g.TTFTP95, g.TotalP50, g.TotalP95, cache)
		}
	}
	b.WriteString("\n## Failure kinds (first attempts, lenient parser)\n\n| model | format | mode | kinds | strict-only kinds | repairs |\n|---|---|---|---|---|---|\n")
	for _, g := range s.Groups {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdCell(g.Model), mdCell(FormatLabel(g)), mdCell(g.Mode),
			orDash(kinds(g.FailureKinds)), orDash(kinds(g.StrictFailureKinds)), orDash(kinds(g.Repairs)))
	}
	if len(s.Comparisons) > 0 {
		b.WriteString("\n## Format comparisons\n\nTwo-sided two-proportion z-test at 5% (pooled); not called significant when either sample has fewer than 5 expected successes or failures.\n\n| model | mode | metric | A | B | A rate | B rate | p | verdict |\n|---|---|---|---|---|---:|---:|---:|---|\n")
		for _, c := range s.Comparisons {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %.3g | %s |\n", mdCell(c.Model), mdCell(c.ModeLabel()), c.Metric,
				mdCell(c.LabelA()), mdCell(c.LabelB()), PctKN(c.Test.A), PctKN(c.Test.B), c.Test.P, c.Verdict())
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summaryColumns are the rate columns of the summary tables: the first
// attempt rates, truncated where any server said why it stopped, and
// success within each retry the run allowed (at most 3).
func summaryColumns(s bench.Summary, m Meta) []rateColumn {
	cols := slices.Clone(rateColumns[:6])
	if anyMeasured(s.Groups, func(g bench.Group) stats.Rate { return g.Truncated }) {
		cols = append(cols, truncatedColumn)
	}
	return append(cols, retryColumns(retryBudget(s, m))...)
}

var truncatedColumn = rateColumn{"truncated", "truncated", func(g bench.Group) stats.Rate { return g.Truncated }}

func hasTimings(s bench.Summary) bool {
	for _, g := range s.Groups {
		if g.TotalP50 > 0 || g.TTFTP50 > 0 || g.PromptTokensP50 > 0 {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// mdCell escapes what would break a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}
