package bench

import (
	"cmp"
	"slices"
	"strings"

	"github.com/toolharness/toolharness/bench/stats"
)

// Summary is the aggregate of a results file: one Group per model × format
// × mode, and the format comparisons within each model and mode.
type Summary struct {
	Groups      []Group            `json:"groups"`
	Comparisons []FormatComparison `json:"comparisons,omitempty"`
}

// Group holds the metrics of one model × format × mode.
//
// Denominators: parse, schema and call-choice rates count first attempts
// (a retry sees the error message and is a different question);
// missed-call and wrong-tool rates count first attempts of cases that
// expect calls, false-call rates those of restraint cases; success rates
// count cases that have an expectation. A case any of whose requests failed
// in the harness or server (Error set on any attempt) is counted in Errors
// and left out of every rate, even when an earlier attempt was judged.
type Group struct {
	Model  string `json:"model"`
	Format string `json:"format"`
	// FormatUsed is what Format resolved to (Native: the template's own
	// format), when it differs; formats joined by "/" if cases differed.
	FormatUsed string `json:"format_used,omitempty"`
	Mode       string `json:"mode"`
	// Cases counts cases (final records), Attempts every record.
	Cases    int `json:"cases"`
	Attempts int `json:"attempts"`
	Errors   int `json:"errors"`

	StrictFailure  stats.Rate `json:"strict_parse_failure"`
	LenientFailure stats.Rate `json:"lenient_parse_failure"`
	SchemaInvalid  stats.Rate `json:"schema_invalid"`
	WrongTool      stats.Rate `json:"wrong_tool"`
	MissedCall     stats.Rate `json:"missed_call"`
	FalseCall      stats.Rate `json:"false_call"`
	// Truncated counts first attempts cut by the token limit, over first
	// attempts whose server said why it stopped (not recorded outputs).
	Truncated   stats.Rate `json:"truncated"`
	FirstTry    stats.Rate `json:"first_try_success"`
	Within1     stats.Rate `json:"success_within_1_retry"`
	Within2     stats.Rate `json:"success_within_2_retries"`
	Within3     stats.Rate `json:"success_within_3_retries"`
	MeanRetries float64    `json:"mean_retries"`
	// MostRetries is the most retries a measured case had.
	MostRetries int `json:"most_retries"`

	// FailureKinds counts first attempts by the lenient parser's first
	// error kind; StrictFailureKinds by StrictFailureKind.
	FailureKinds       map[string]int `json:"failure_kinds,omitempty"`
	StrictFailureKinds map[string]int `json:"strict_failure_kinds,omitempty"`
	// Repairs counts the lenient parser's repairs, by kind, over the
	// calls of first attempts.
	Repairs  map[string]int `json:"repairs,omitempty"`
	Verdicts map[string]int `json:"verdicts"`

	PromptTokensP50    float64 `json:"prompt_tokens_p50"`
	PromptTokensP90    float64 `json:"prompt_tokens_p90"`
	GeneratedTokensP50 float64 `json:"generated_tokens_p50"`
	GeneratedTokensP90 float64 `json:"generated_tokens_p90"`
	TTFTP50            float64 `json:"ttft_ms_p50"`
	TTFTP95            float64 `json:"ttft_ms_p95"`
	TotalP50           float64 `json:"total_ms_p50"`
	TotalP95           float64 `json:"total_ms_p95"`
	// CacheReuse is cached prompt tokens over prompt tokens, over attempts
	// whose server reported the cached count; nil when none did.
	CacheReuse *float64 `json:"cache_reuse,omitempty"`
}

// FormatComparison says whether two formats differ on one metric for the
// same model and mode (two-sided two-proportion z-test at 5%).
type FormatComparison struct {
	Model   string `json:"model"`
	Mode    string `json:"mode"`
	Metric  string `json:"metric"`
	FormatA string `json:"format_a"`
	FormatB string `json:"format_b"`
	// UsedA and UsedB are what the formats resolved to (Group.FormatUsed).
	UsedA string           `json:"format_used_a,omitempty"`
	UsedB string           `json:"format_used_b,omitempty"`
	Test  stats.Comparison `json:"test"`
	// ModeB is set when the pair crosses modes: B is the server's own
	// parser (mode server) and A a format of Mode.
	ModeB string `json:"mode_b,omitempty"`
}

// serverMode is the mode whose calls come from the server's own parser
// (backend.ModeServer).
const serverMode = "server"

// LabelA and LabelB name the formats as the reports do: "native=hermes"
// when the format resolved to another, and with its mode in brackets in a
// pair that crosses modes.
func (c FormatComparison) LabelA() string { return c.label(c.FormatA, c.UsedA, c.Mode) }
func (c FormatComparison) LabelB() string { return c.label(c.FormatB, c.UsedB, c.ModeB) }

func (c FormatComparison) label(format, used, mode string) string {
	l := formatLabel(format, used)
	if c.ModeB != "" {
		l += " (" + mode + ")"
	}
	return l
}

// ModeLabel is the comparison's mode, "raw vs server" for a pair that
// crosses modes.
func (c FormatComparison) ModeLabel() string {
	if c.ModeB != "" {
		return c.Mode + " vs " + c.ModeB
	}
	return c.Mode
}

// Label names the group's format as the reports do.
func (g Group) Label() string { return formatLabel(g.Format, g.FormatUsed) }

func formatLabel(format, used string) string {
	if used == "" {
		return format
	}
	return format + "=" + used
}

// Verdict words for a comparison, used by every report.
func (c FormatComparison) Verdict() string {
	switch {
	case c.Test.Note != "":
		return "not tested: " + c.Test.Note
	case !c.Test.Significant:
		return "no significant difference"
	case c.Test.Diff < 0:
		return c.LabelA() + " higher"
	default:
		return c.LabelB() + " higher"
	}
}

type groupKey struct{ model, format, mode string }

// Summarize aggregates records.
func Summarize(recs []Record) Summary {
	byKey := map[groupKey][]Record{}
	var keys []groupKey
	for _, r := range recs {
		k := groupKey{r.Model, r.Format, r.Mode}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(strings.Compare(a.model, b.model), strings.Compare(a.mode, b.mode), strings.Compare(a.format, b.format))
	})
	var s Summary
	for _, k := range keys {
		s.Groups = append(s.Groups, summarizeGroup(k, byKey[k]))
	}
	s.Comparisons = compareFormats(s.Groups)
	return s
}

type counter struct{ k, n int }

func (c *counter) add(hit bool) {
	c.n++
	if hit {
		c.k++
	}
}

func (c counter) rate() stats.Rate { return stats.NewRate(c.k, c.n) }

// caseSpans splits a group's records into cases: each case's records are
// written together and end with its final record.
func caseSpans(recs []Record) [][]Record {
	var out [][]Record
	start := 0
	for i, r := range recs {
		if r.Final {
			out = append(out, recs[start:i+1])
			start = i + 1
		}
	}
	if start < len(recs) {
		out = append(out, recs[start:]) // a case without its final record
	}
	return out
}

// failed reports whether any request of a case failed in the harness or
// server: such a case is an error, whatever its earlier attempts said.
func failed(c []Record) bool {
	return slices.ContainsFunc(c, func(r Record) bool { return r.Error != "" })
}

func summarizeGroup(k groupKey, recs []Record) Group {
	g := Group{Model: k.model, Format: k.format, Mode: k.mode, Verdicts: map[string]int{}}
	var t tally
	for _, c := range caseSpans(recs) {
		g.Attempts += len(c)
		last := c[len(c)-1]
		if last.Final {
			g.Cases++
			g.Verdicts[string(last.Verdict)]++
		}
		if failed(c) {
			// Left out of every rate, timing and kind count: a failed
			// request measured nothing about the model.
			g.Errors++
			continue
		}
		for _, r := range c {
			t.add(&g, r)
		}
	}
	t.fill(&g)
	return g
}

// tally gathers the rates of a group over the records of its measured
// cases.
type tally struct {
	strict, lenient, schema, wrong, missed, falseCall, truncated, first, w1, w2, w3 counter
	retries, prompt, gen, ttft, total                                               []float64
	cached, cachedPrompt                                                            int
	cacheKnown                                                                      bool
	used                                                                            []string // formats used, when not the one asked
}

func (t *tally) add(g *Group, r Record) {
	if r.Final && (len(r.Expected) > 0 || r.ExpectNoCall) {
		// Success needs something to be right about: cases without an
		// expectation (some corpus records) count only in parse rates.
		ok := r.Success
		t.first.add(ok && r.Retries == 0)
		t.w1.add(ok && r.Retries <= 1)
		t.w2.add(ok && r.Retries <= 2)
		t.w3.add(ok && r.Retries <= 3)
		t.retries = append(t.retries, float64(r.Retries))
	}
	if r.Final {
		g.MostRetries = max(g.MostRetries, r.Retries)
	}
	if r.FormatUsed != "" && r.FormatUsed != r.Format && !slices.Contains(t.used, r.FormatUsed) {
		t.used = append(t.used, r.FormatUsed)
	}
	if r.PromptTokens > 0 {
		t.prompt = append(t.prompt, float64(r.PromptTokens))
	}
	if r.GeneratedTokens > 0 {
		t.gen = append(t.gen, float64(r.GeneratedTokens))
	}
	if r.TTFTMillis > 0 {
		t.ttft = append(t.ttft, r.TTFTMillis)
	}
	if r.TotalMillis > 0 {
		t.total = append(t.total, r.TotalMillis)
	}
	if r.CachedKnown {
		t.cacheKnown = true
		t.cached += r.CachedTokens
		t.cachedPrompt += r.PromptTokens
	}
	if r.Attempt != 0 {
		return
	}
	strictKind := StrictFailureKind(r.Strict, r.Lenient)
	t.strict.add(strictKind != "")
	t.lenient.add(r.Lenient.Failed())
	t.schema.add(len(r.SchemaErrors) > 0)
	if r.StopReason != "" {
		t.truncated.add(r.Verdict == VerdictTruncated)
	}
	if kind := r.Lenient.FailureKind(); kind != "" {
		inc(&g.FailureKinds, kind)
	}
	for _, c := range r.Lenient.Calls {
		for _, rep := range c.Repairs {
			inc(&g.Repairs, rep)
		}
	}
	if strictKind != "" {
		inc(&g.StrictFailureKinds, strictKind)
	}
	if len(r.Expected) > 0 {
		t.wrong.add(r.Verdict == VerdictWrongTool)
		t.missed.add(r.Verdict == VerdictMissedCall)
	}
	if r.ExpectNoCall {
		t.falseCall.add(r.Verdict == VerdictFalseCall)
	}
}

func (t *tally) fill(g *Group) {
	g.StrictFailure, g.LenientFailure, g.SchemaInvalid = t.strict.rate(), t.lenient.rate(), t.schema.rate()
	g.WrongTool, g.MissedCall, g.FalseCall, g.Truncated = t.wrong.rate(), t.missed.rate(), t.falseCall.rate(), t.truncated.rate()
	g.FirstTry, g.Within1, g.Within2, g.Within3 = t.first.rate(), t.w1.rate(), t.w2.rate(), t.w3.rate()
	g.MeanRetries = stats.Mean(t.retries)
	slices.Sort(t.used)
	g.FormatUsed = strings.Join(t.used, "/")
	g.PromptTokensP50, g.PromptTokensP90 = stats.Percentile(t.prompt, 0.5), stats.Percentile(t.prompt, 0.9)
	g.GeneratedTokensP50, g.GeneratedTokensP90 = stats.Percentile(t.gen, 0.5), stats.Percentile(t.gen, 0.9)
	g.TTFTP50, g.TTFTP95 = stats.Percentile(t.ttft, 0.5), stats.Percentile(t.ttft, 0.95)
	g.TotalP50, g.TotalP95 = stats.Percentile(t.total, 0.5), stats.Percentile(t.total, 0.95)
	if t.cacheKnown && t.cachedPrompt > 0 {
		v := float64(t.cached) / float64(t.cachedPrompt)
		g.CacheReuse = &v
	}
}

func inc(m *map[string]int, k string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}

// compareFormats tests every pair of formats of the same model and mode
// on the lenient failure rate and first-try success, and every format of
// a harness mode (raw, chat) against the server's own parser (server
// mode) of the same model: the baseline the harness is measured against.
func compareFormats(groups []Group) []FormatComparison {
	var out []FormatComparison
	for i := range groups {
		for j := i + 1; j < len(groups); j++ {
			a, b := groups[i], groups[j]
			if a.Model != b.Model {
				continue
			}
			cross := (a.Mode == serverMode) != (b.Mode == serverMode)
			if !cross && (a.Mode != b.Mode || a.Format == b.Format) {
				continue
			}
			if cross && a.Mode == serverMode {
				a, b = b, a // the server's parser is always B
			}
			pair := FormatComparison{Model: a.Model, Mode: a.Mode, FormatA: a.Format, FormatB: b.Format, UsedA: a.FormatUsed, UsedB: b.FormatUsed}
			if cross {
				pair.ModeB = b.Mode
			}
			lenient, first := pair, pair
			lenient.Metric, lenient.Test = "lenient_parse_failure", stats.TwoProportion(a.LenientFailure, b.LenientFailure)
			first.Metric, first.Test = "first_try_success", stats.TwoProportion(a.FirstTry, b.FirstTry)
			out = append(out, lenient, first)
		}
	}
	return out
}
