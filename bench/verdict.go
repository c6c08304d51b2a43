package bench

import "encoding/json"

// Call is a tool call as the benchmark records it.
type Call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Repairs   []string        `json:"repairs,omitempty"`
	// Error is set on a call that was recognised but is not usable
	// (unknown tool, malformed arguments).
	Error *Problem `json:"error,omitempty"`
}

// Problem is a parse or validation error: a kind from the parser's closed
// list and its message.
type Problem struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
}

// ParseResult is one parser's reading of a raw output.
type ParseResult struct {
	Calls []Call `json:"calls"`
	// Errors are problems not attached to a call (an unclosed block).
	Errors []Problem `json:"errors,omitempty"`
	// Content is the text outside calls.
	Content string `json:"content,omitempty"`
	// EndTurn is set when the output went on past its turn (kind
	// overran_turn): the calls after it were not taken.
	EndTurn *Problem `json:"end_turn,omitempty"`
}

// Failed reports whether the parser reported any problem.
func (p ParseResult) Failed() bool { return p.FailureKind() != "" }

// FailureKind is the kind of the first problem, "" when there is none.
// Calls come before an overrun turn and block errors: a bad call is the
// more specific news.
func (p ParseResult) FailureKind() string {
	for _, c := range p.Calls {
		if c.Error != nil {
			return c.Error.Kind
		}
	}
	if p.EndTurn != nil {
		return KindOverranTurn
	}
	if len(p.Errors) > 0 {
		return p.Errors[0].Kind
	}
	return ""
}

// cleanCalls counts calls without an error.
func (p ParseResult) cleanCalls() int {
	n := 0
	for _, c := range p.Calls {
		if c.Error == nil {
			n++
		}
	}
	return n
}

// StrictFailureKind says why the strict parser failed on an output, ""
// when it did not. A strict parser does not report an error for a call it
// does not recognise (a fenced call is just text to it), so a strict
// failure is either an error it reports or a call the lenient parser
// recovered that the strict one missed; the latter is "needs_" plus the
// first repair the lenient parser made ("needs_code_fence").
func StrictFailureKind(strict, lenient ParseResult) string {
	if k := strict.FailureKind(); k != "" {
		return k
	}
	if strict.cleanCalls() >= lenient.cleanCalls() {
		return ""
	}
	for _, c := range lenient.Calls {
		if c.Error == nil && len(c.Repairs) > 0 {
			return "needs_" + c.Repairs[0]
		}
	}
	return "missed_by_strict"
}

// KindUnknownTool is the parser's error kind for a call naming a tool the
// catalog does not have; the benchmark scores it as a wrong tool.
const KindUnknownTool = "unknown_tool"

// KindOverranTurn is the parser's kind for an output that went on past
// its turn (an invented next turn); its own verdict.
const KindOverranTurn = "overran_turn"

// onlyUnknownTools reports whether every problem is an unknown tool.
func (p ParseResult) onlyUnknownTools() bool {
	if len(p.Errors) > 0 {
		return false
	}
	for _, c := range p.Calls {
		if c.Error != nil && c.Error.Kind != KindUnknownTool {
			return false
		}
	}
	return true
}

// Verdict is the outcome of one attempt against the case's expectation.
type Verdict string

// The verdicts. An attempt succeeds only with VerdictOK, or, when the case
// has no expectation, with VerdictUnscored (parsed and schema-valid).
const (
	VerdictOK            Verdict = "ok"
	VerdictUnscored      Verdict = "unscored"
	VerdictParseFailure  Verdict = "parse_failure"
	VerdictSchemaInvalid Verdict = "schema_invalid"
	VerdictMissedCall    Verdict = "missed_call"
	VerdictFalseCall     Verdict = "false_call"
	VerdictWrongTool     Verdict = "wrong_tool"
	VerdictWrongArgs     Verdict = "wrong_args"
	VerdictWrongCount    Verdict = "wrong_count"
	// VerdictTruncated is a generation the token limit cut: the output is
	// not what the model would have written, so it is not judged.
	VerdictTruncated Verdict = "truncated"
	// VerdictOverranTurn: the model went on writing another turn after
	// its own (what it called there was not taken).
	VerdictOverranTurn Verdict = "overran_turn"
	// VerdictError is a harness or server failure: no model output to judge.
	VerdictError Verdict = "error"
)

// StopLength is the stop reason of a generation cut by the token limit
// (backend.Response.StopReason).
const StopLength = "length"

// JudgeAttempt scores one generation. How the generation ended comes
// before what it says: a cut output is VerdictTruncated whatever it
// holds. Otherwise the output is judged (Judge).
func JudgeAttempt(exp Expectation, a AttemptRun) Verdict {
	if a.StopReason == StopLength {
		return VerdictTruncated
	}
	return Judge(exp, a.Lenient, len(a.SchemaErrors) > 0)
}

// Success reports whether the verdict counts as a successful attempt.
func (v Verdict) Success() bool { return v == VerdictOK || v == VerdictUnscored }

// Judge scores the lenient parse of one attempt against exp. schemaInvalid
// says the registry rejected at least one call's arguments.
//
// Precedence: a restraint case fails on any call, even a broken one (the
// model tried to act); otherwise parse failures come first (nothing
// reliable to compare), then schema failures, then the comparison itself.
// A call naming an unknown tool is a wrong tool, not a parse failure.
func Judge(exp Expectation, lenient ParseResult, schemaInvalid bool) Verdict {
	overran := lenient.FailureKind() == KindOverranTurn
	if exp.NoCall {
		switch {
		case len(lenient.Calls) > 0 || lenient.Failed() && !overran:
			return VerdictFalseCall
		case overran:
			return VerdictOverranTurn
		}
		return VerdictOK
	}
	if overran {
		return VerdictOverranTurn
	}
	unknown := false
	if lenient.Failed() {
		if !lenient.onlyUnknownTools() {
			return VerdictParseFailure
		}
		unknown = true
	}
	if !exp.HasExpectation() {
		switch {
		case unknown:
			return VerdictParseFailure
		case schemaInvalid:
			return VerdictSchemaInvalid
		}
		return VerdictUnscored
	}
	if len(lenient.Calls) == 0 {
		return VerdictMissedCall
	}
	expected := map[string]bool{}
	for _, c := range exp.Calls {
		expected[c.Name] = true
	}
	for _, c := range lenient.Calls {
		if !expected[c.Name] {
			return VerdictWrongTool
		}
	}
	if unknown {
		return VerdictWrongTool
	}
	if schemaInvalid {
		return VerdictSchemaInvalid
	}
	if len(lenient.Calls) != len(exp.Calls) {
		return VerdictWrongCount
	}
	if exp.Ordered {
		for i, want := range exp.Calls {
			if !matchCall(want, lenient.Calls[i], exp.ExtraArgs) {
				return VerdictWrongArgs
			}
		}
		return VerdictOK
	}
	if matchUnordered(exp.Calls, lenient.Calls, exp.ExtraArgs) {
		return VerdictOK
	}
	return VerdictWrongArgs
}

// matchUnordered finds a one-to-one assignment of calls to expectations
// (augmenting paths; suites have a handful of calls per case).
func matchUnordered(want []ExpectedCall, got []Call, extra bool) bool {
	owner := make([]int, len(got)) // got index -> want index, -1 free
	for i := range owner {
		owner[i] = -1
	}
	var try func(w int, seen []bool) bool
	try = func(w int, seen []bool) bool {
		for g := range got {
			if seen[g] || !matchCall(want[w], got[g], extra) {
				continue
			}
			seen[g] = true
			if owner[g] < 0 || try(owner[g], seen) {
				owner[g] = w
				return true
			}
		}
		return false
	}
	for w := range want {
		if !try(w, make([]bool, len(got))) {
			return false
		}
	}
	return true
}
