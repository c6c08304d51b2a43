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
// count cases that have an expectation. Attempts that failed in the harness or server (Error set)
// are counted in Errors and left out of every rate.
type Group struct {
	Model  string `json:"model"`
	Format string `json:"format"`
	Mode   string `json:"mode"`
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
	FirstTry       stats.Rate `json:"first_try_success"`
	Within1        stats.Rate `json:"success_within_1_retry"`
	Within2        stats.Rate `json:"success_within_2_retries"`
	Within3        stats.Rate `json:"success_within_3_retries"`
	MeanRetries    float64    `json:"mean_retries"`

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
	Model   string           `json:"model"`
	Mode    string           `json:"mode"`
	Metric  string           `json:"metric"`
	FormatA string           `json:"format_a"`
	FormatB string           `json:"format_b"`
	Test    stats.Comparison `json:"test"`
}

// Verdict words for a comparison, used by every report.
func (c FormatComparison) Verdict() string {
	switch {
	case c.Test.Note != "":
		return "not tested: " + c.Test.Note
	case !c.Test.Significant:
		return "no significant difference"
	case c.Test.Diff < 0:
		return c.FormatA + " higher"
	default:
		return c.FormatB + " higher"
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

func summarizeGroup(k groupKey, recs []Record) Group {
	g := Group{Model: k.model, Format: k.format, Mode: k.mode, Verdicts: map[string]int{}}
	var strict, lenient, schema, wrong, missed, falseCall, first, w1, w2, w3 counter
	var retries, prompt, gen, ttft, total []float64
	var cached, cachedPrompt int
	cacheKnown := false
	for _, r := range recs {
		g.Attempts++
		if r.Final {
			g.Cases++
			g.Verdicts[string(r.Verdict)]++
			// Success needs something to be right about: cases without an
			// expectation (some corpus records) count only in parse rates.
			scored := len(r.Expected) > 0 || r.ExpectNoCall
			if scored && (r.Error == "" || r.Attempt > 0) {
				ok := r.Success
				first.add(ok && r.Retries == 0)
				w1.add(ok && r.Retries <= 1)
				w2.add(ok && r.Retries <= 2)
				w3.add(ok && r.Retries <= 3)
				retries = append(retries, float64(r.Retries))
			}
		}
		if r.Error != "" {
			g.Errors++
			continue
		}
		if r.PromptTokens > 0 {
			prompt = append(prompt, float64(r.PromptTokens))
		}
		if r.GeneratedTokens > 0 {
			gen = append(gen, float64(r.GeneratedTokens))
		}
		if r.TTFTMillis > 0 {
			ttft = append(ttft, r.TTFTMillis)
		}
		if r.TotalMillis > 0 {
			total = append(total, r.TotalMillis)
		}
		if r.CachedKnown {
			cacheKnown = true
			cached += r.CachedTokens
			cachedPrompt += r.PromptTokens
		}
		if r.Attempt != 0 {
			continue
		}
		strictKind := StrictFailureKind(r.Strict, r.Lenient)
		strict.add(strictKind != "")
		lenient.add(r.Lenient.Failed())
		schema.add(len(r.SchemaErrors) > 0)
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
			wrong.add(r.Verdict == VerdictWrongTool)
			missed.add(r.Verdict == VerdictMissedCall)
		}
		if r.ExpectNoCall {
			falseCall.add(r.Verdict == VerdictFalseCall)
		}
	}
	g.StrictFailure, g.LenientFailure, g.SchemaInvalid = strict.rate(), lenient.rate(), schema.rate()
	g.WrongTool, g.MissedCall, g.FalseCall = wrong.rate(), missed.rate(), falseCall.rate()
	g.FirstTry, g.Within1, g.Within2, g.Within3 = first.rate(), w1.rate(), w2.rate(), w3.rate()
	g.MeanRetries = stats.Mean(retries)
	g.PromptTokensP50, g.PromptTokensP90 = stats.Percentile(prompt, 0.5), stats.Percentile(prompt, 0.9)
	g.GeneratedTokensP50, g.GeneratedTokensP90 = stats.Percentile(gen, 0.5), stats.Percentile(gen, 0.9)
	g.TTFTP50, g.TTFTP95 = stats.Percentile(ttft, 0.5), stats.Percentile(ttft, 0.95)
	g.TotalP50, g.TotalP95 = stats.Percentile(total, 0.5), stats.Percentile(total, 0.95)
	if cacheKnown && cachedPrompt > 0 {
		v := float64(cached) / float64(cachedPrompt)
		g.CacheReuse = &v
	}
	return g
}

func inc(m *map[string]int, k string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}

// compareFormats tests every pair of formats of the same model and mode
// on the lenient failure rate and first-try success.
func compareFormats(groups []Group) []FormatComparison {
	var out []FormatComparison
	for i := range groups {
		for j := i + 1; j < len(groups); j++ {
			a, b := groups[i], groups[j]
			if a.Model != b.Model || a.Mode != b.Mode || a.Format == b.Format {
				continue
			}
			out = append(out,
				FormatComparison{Model: a.Model, Mode: a.Mode, Metric: "lenient_parse_failure", FormatA: a.Format, FormatB: b.Format,
					Test: stats.TwoProportion(a.LenientFailure, b.LenientFailure)},
				FormatComparison{Model: a.Model, Mode: a.Mode, Metric: "first_try_success", FormatA: a.Format, FormatB: b.Format,
					Test: stats.TwoProportion(a.FirstTry, b.FirstTry)},
			)
		}
	}
	return out
}
