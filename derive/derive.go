package derive

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/toolharness/toolharness/parse"
)

// Tokens are the template's special tokens as its tokenizer defines them
// (empty when it has none); EOS is a stop string of every template.
type Tokens struct{ BOS, EOS string }

// Result is what derivation learned about a template.
type Result struct {
	// Catalog: the template renders the tool catalog passed as tools.
	Catalog bool `json:"catalog"`
	// WritesCalls: the template renders an assistant turn's tool calls;
	// Style is the input style that it accepted (hf, vllm or openai), and
	// CatalogFree that it rendered them only without a catalog.
	WritesCalls bool   `json:"writes_calls"`
	Style       string `json:"style,omitempty"`
	// Parallel: the template renders two calls of one turn.
	Parallel bool `json:"parallel"`
	// Format names the built-in parse format that reads the derived
	// syntax; "" when only the derived Syntax does.
	Format string `json:"format,omitempty"`
	// Syntax is the derived call syntax (set when WritesCalls).
	Syntax parse.Syntax `json:"syntax"`
	// PromptTail is the end of the generation prompt that is already part
	// of the call syntax (functionary v3.2's ">>>", gpt-oss's
	// "<|start|>assistant"): the model's output continues it, so
	// NewOutputParser feeds it to the parser first. "" for most templates.
	PromptTail string `json:"prompt_tail,omitempty"`
	// ThinkOpen: the generation prompt itself opens a reasoning block.
	ThinkOpen bool `json:"think_open"`
	// GenerationPrompt is what the generation prompt appends after the
	// turn header an answer starts with ("" for most templates).
	GenerationPrompt string `json:"generation_prompt,omitempty"`
	// Stop holds the end-of-turn strings: the marker after an answer, the
	// one after a call turn when it differs, and EOS.
	Stop []string `json:"stop"`
	// ParsesOwnCalls: the parser NewParser returns reads the probe calls
	// back out of the template's own renders of them (one call, and two
	// where it renders parallel calls). False for a template that writes
	// calls means the derived syntax is wrong; Notes say how.
	ParsesOwnCalls bool `json:"parses_own_calls"`
	// RoleStops are the template's own markers of a new user turn
	// ("<|im_start|>user", "<|start_header_id|>user", "[INST]"): a model
	// that writes one has run past its turn and is inventing the next, so
	// a backend sends them as stop strings with Stop (StopStrings gives
	// both).
	RoleStops []string `json:"role_stops,omitempty"`
	// Notes say what could not be derived and why, one line each.
	Notes []string `json:"notes,omitempty"`
}

// ErrNoRender is returned (wrapped) when the template renders none of the
// basic probes: nothing can be learned from it.
var ErrNoRender = errors.New("derive: the template renders no probe conversation")

// renders renders each probe once, on demand.
type renders struct {
	r     Renderer
	byKey map[string]Request
	text  map[string]string
	err   map[string]error
}

func newRenders(r Renderer) *renders {
	rs := &renders{r: r, byKey: map[string]Request{}, text: map[string]string{}, err: map[string]error{}}
	for _, p := range Probes() {
		rs.byKey[p.Name] = p.Request
	}
	return rs
}

func (rs *renders) get(name string) (string, error) {
	if t, ok := rs.text[name]; ok {
		return t, nil
	}
	if err, ok := rs.err[name]; ok {
		return "", err
	}
	req, ok := rs.byKey[name]
	if !ok {
		return "", fmt.Errorf("derive: no probe %q", name)
	}
	t, err := rs.r.Render(req)
	if err != nil {
		rs.err[name] = err
		return "", err
	}
	rs.text[name] = t
	return t, nil
}

// Derive renders the probe conversations through r and learns the call
// syntax, reasoning markers and stop strings from the differences.
func Derive(r Renderer, tok Tokens) (Result, error) {
	rs := newRenders(r)
	var res Result
	catalog, catErr := rs.get(probeCatalog)
	noTools, noErr := rs.get(probeNoTools)
	answer, ansErr := rs.get(probeAnswer)
	if catErr != nil && noErr != nil {
		return res, fmt.Errorf("%w: %w", ErrNoRender, catErr)
	}
	res.Catalog = catErr == nil && strings.Contains(catalog, sentinelTool1) && !strings.Contains(noTools, sentinelTool1)
	if !res.Catalog {
		res.Notes = append(res.Notes, "the template does not render the tools it is given")
	}
	if ansErr == nil {
		res.Stop = endOfTurn(answer, sentinelAnswer)
		next, nextErr := rs.get(probeNextUser)
		if len(res.Stop) == 0 && nextErr == nil {
			// Nothing closes an answer: what opens the next turn ends it.
			res.Stop = nextTurn(next)
		}
		if nextErr == nil {
			res.RoleStops = roleStops(next, append(res.Stop, tok.BOS, tok.EOS))
		}
		if catErr == nil {
			res.GenerationPrompt = catalog[commonPrefix(catalog, answer):]
		}
	} else {
		res.Notes = append(res.Notes, "an assistant answer does not render: "+oneLine(ansErr))
	}
	open, close, thinkOpen := learnReasoning(rs, answer, res.GenerationPrompt)
	res.ThinkOpen = thinkOpen
	var syntaxNotes []string // about the derived syntax: moot when a built-in format reads it
	c, style, note := findCalls(rs)
	calls := c
	if c != nil {
		res.WritesCalls, res.Style, res.Parallel = true, style, c.parallel
		res.Syntax, syntaxNotes = learnSyntax(c)
		res.Syntax.Label = "derived"
		if StyleNamed(style).NamedIDs {
			res.Notes = append(res.Notes, "the template writes a call's id where its name goes: calls are rendered with ids functions.NAME:INDEX, and the name is read out of them")
		}
		for _, after := range []string{firstPiece(c.one[c.oneEnd:]), afterCalls(c.one[c.site1.end:], res.Syntax)} {
			if specialLen(after) == len(after) && after != "" && !slices.Contains(res.Stop, after) {
				res.Stop = append(res.Stop, after)
			}
		}
	} else {
		res.Notes = append(res.Notes, note)
	}
	if tok.EOS != "" && !slices.Contains(res.Stop, tok.EOS) {
		res.Stop = append(res.Stop, tok.EOS)
	}
	res.Syntax.ReasoningOpen, res.Syntax.ReasoningClose = open, close
	res.Syntax.Stop = res.Stop
	if res.WritesCalls {
		res.pickFormat(syntaxNotes)
		res.checkParsers(calls)
	}
	if res.WritesCalls && catErr == nil {
		if one, err := rs.get(probeCallName(1, StyleNamed(res.Style))); err == nil {
			res.PromptTail = learnPromptTail(res, catalog, one)
		}
	}
	return res, nil
}

// StopStrings are the strings a backend stops generation at: the
// end-of-turn markers, then the role markers of an invented next turn.
func (r Result) StopStrings() []string {
	out := append([]string(nil), r.Stop...)
	for _, s := range r.RoleStops {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// afterCalls is the marker the template writes after a turn's calls,
// their closing markers skipped (FunctionGemma's <start_function_response>,
// Gemma 4's <|tool_response>: where the model hands over to the tool).
func afterCalls(rest string, s parse.Syntax) string {
	for _, m := range []string{s.ValueClose, s.ArgsSuffix, s.CallClose, s.SectionClose} {
		for _, p := range strings.Fields(m) {
			rest = strings.TrimPrefix(strings.TrimLeftFunc(rest, unicode.IsSpace), p)
		}
	}
	return firstPiece(rest)
}

// pickFormat names the built-in format that reads the derived syntax, if
// one does, and otherwise checks the derived syntax and keeps the notes
// about it.
func (res *Result) pickFormat(syntaxNotes []string) {
	s := res.Syntax
	res.Format = builtinFormat(s)
	if f := res.Format; f != "" && f != "harmony" && s.ReasoningOpen != "" && s.ReasoningOpen != "<think>" {
		// A built-in format reads reasoning only in <think> (harmony in
		// its channels): the derived syntax keeps the template's own
		// markers out of the calls.
		res.Notes = append(res.Notes, fmt.Sprintf("the calls are the %s format's, but its parser reads reasoning only in <think>: the derived syntax is used, for %s … %s",
			f, s.ReasoningOpen, s.ReasoningClose))
		res.Format = ""
	}
	if res.Format == "" {
		res.Notes = append(res.Notes, syntaxNotes...)
		if err := s.Validate(); err != nil {
			res.Notes = append(res.Notes, oneLine(err))
		}
	}
}

// endOfTurn returns the marker written right after an answer's text.
func endOfTurn(render, sentinel string) []string {
	i := strings.LastIndex(render, sentinel)
	if i < 0 {
		return nil
	}
	if m := firstPiece(render[i+len(sentinel):]); m != "" {
		return []string{m}
	}
	return nil
}

// nextTurn returns the marker that opens the turn after an answer.
func nextTurn(render string) []string {
	i := strings.LastIndex(render, sentinelAnswer)
	j := strings.LastIndex(render, sentinelUser2)
	if i < 0 || j < i {
		return nil
	}
	between := render[i+len(sentinelAnswer) : j]
	if k := strings.LastIndex(between, sentinelTool1); k >= 0 {
		// The catalog is written before the last user message (Mistral's
		// [AVAILABLE_TOOLS]…[/AVAILABLE_TOOLS]): its markers open no
		// turn. The turn's opener is the marker after the catalog's close.
		between = between[k:]
		b := tokenBounds(between)
		var special []string
		for n := 0; n+1 < len(b); n++ {
			if m := between[b[n]:b[n+1]]; specialLen(m) == len(m) {
				special = append(special, m)
			}
		}
		if len(special) < 2 {
			return nil
		}
		return []string{special[1]}
	}
	if m := firstPiece(between); m != "" && specialLen(m) == len(m) {
		return []string{m}
	}
	return nil
}

// learnReasoning finds the reasoning block's markers: around the reasoning
// text of a rendered turn, or (for templates that drop history reasoning)
// opened by the generation prompt as "<x>" with its "</x>".
func learnReasoning(rs *renders, answer, genPrompt string) (open, close string, thinkOpen bool) {
	if answer != "" {
		open, close = reasoningMarkers(rs, probeReasoning, answer, false)
		if open == "" {
			// Mistral's templates take reasoning only as a thinking
			// content block. A template that prints the block as data
			// (its JSON or repr) must not make quotes into markers: only
			// special tokens count here.
			open, close = reasoningMarkers(rs, probeThinkingBlock, answer, true)
		}
		if open != "" && opensTurn(rs, answer) {
			// Apriel 1.6 writes reasoning right after the turn header and
			// ends it with a marker: the header opens every turn, not the
			// reasoning, and taken as the opener it would make every call
			// turn read as reasoning.
			open, close = "", ""
		}
	}
	g := lastPiece(genPrompt)
	if isPlainTag(g) && (open == "" || open == g) {
		return g, "</" + g[1:], true
	}
	return open, close, open != "" && promptOpensReasoning(rs, open)
}

// opensTurn: the reasoning takes the answer's place after the same
// text (the turn header), so what precedes it opens the turn, not a
// reasoning block. gpt-oss's analysis channel and Qwen3's <think> differ
// from what precedes an answer.
func opensTurn(rs *renders, answer string) bool {
	withReasoning, err := rs.get(probeReasoning)
	i, j := strings.Index(withReasoning, sentinelReasoning), strings.Index(answer, sentinelAnswer)
	return err == nil && i >= 0 && j >= 0 && withReasoning[:i] == answer[:j]
}

// promptOpensReasoning: the prompt with its generation prompt is where the
// reasoning text starts in a rendered turn that has reasoning. Qwen3
// Thinking-2507 ends the generation prompt with <think>\n and writes the
// last turn's reasoning after the same <think>\n, so the generation
// prompt as the answer render shows it is empty.
func promptOpensReasoning(rs *renders, open string) bool {
	catalog, err1 := rs.get(probeCatalog)
	withReasoning, err2 := rs.get(probeReasoning)
	if err1 != nil || err2 != nil || lastPiece(catalog) != open || !strings.HasPrefix(withReasoning, catalog) {
		return false
	}
	return strings.HasPrefix(strings.TrimLeftFunc(withReasoning[len(catalog):], unicode.IsSpace), sentinelReasoning)
}

// reasoningMarkers reads the markers around the reasoning sentinel of one
// probe's render; tokensOnly accepts only special tokens.
func reasoningMarkers(rs *renders, probe, answer string, tokensOnly bool) (open, close string) {
	withReasoning, err := rs.get(probe)
	if err != nil {
		return "", ""
	}
	// The markers may sit outside the differing region: Qwen3 renders
	// an empty <think></think> around an answer without reasoning.
	start, end := region(withReasoning, answer)
	i := strings.Index(withReasoning[start:end], sentinelReasoning)
	if i < 0 {
		return "", ""
	}
	at := start + i
	o := lastPiece(withReasoning[:at])
	c := firstPiece(withReasoning[at+len(sentinelReasoning):])
	if o == "" || c == "" || tokensOnly && (specialLen(o) != len(o) || specialLen(c) != len(c)) {
		return "", ""
	}
	return o, c
}

// findCalls tries each input style and returns the renders of the first
// that writes the probe call, unless that one only wrote the arguments as
// a Python dict (a template given arguments in a shape it does not expect
// may print them with str()), which any other style beats.
func findCalls(rs *renders) (*callRenders, string, string) {
	ref, err := rs.get(probeEmpty)
	if err != nil {
		if ref, err = rs.get(probeAnswer); err != nil {
			return nil, "", "no assistant turn renders: " + oneLine(err)
		}
	}
	var best *callRenders
	var bestStyle string
	var lastErr error
	idOnly := false // a style rendered the call's id, not its name
	for _, s := range Styles {
		if s.NamedIDs && (best != nil || !idOnly) {
			continue
		}
		one, err := rs.get(probeCallName(1, s))
		if err != nil {
			lastErr = err
			continue
		}
		c := &callRenders{one: one}
		c.oneStart, c.oneEnd = region(one, ref)
		site, ok := locateCall(one, c.oneStart, c.oneEnd, sentinelTool1, sentinelArgs1)
		if !ok {
			idOnly = idOnly || strings.Contains(one[c.oneStart:c.oneEnd], sentinelID1)
			continue
		}
		if best != nil && siteRank(one, site) <= siteRank(best.one, best.site1) {
			continue
		}
		c.site1 = site
		if two, err := rs.get(probeCallName(2, s)); err == nil {
			c.two = two
			c.twoStart, c.twoEnd = region(two, ref)
			c.parallel = secondCall(c)
		}
		best, bestStyle = c, s.Name
	}
	switch {
	case best != nil:
		return best, bestStyle, ""
	case lastErr != nil:
		return nil, "", "no input style renders a tool call: " + oneLine(lastErr)
	}
	return nil, "", "the template does not render assistant tool calls"
}

// siteRank is 0 for arguments printed as a Python dict ({'k': 'v'}:
// only quotes, a colon and spaces between a key and its value), 1 else.
func siteRank(render string, site callSite) int {
	if site.body == parse.BodyPairs {
		kv := render[site.keys[0][1]:site.values[0][0]]
		if strings.Trim(kv, `'": `) == "" {
			return 0
		}
	}
	return 1
}

// secondCall locates both calls in the two-call render; false when the
// template does not render the second one.
func secondCall(c *callRenders) bool {
	a, ok := locateCall(c.two, c.twoStart, c.twoEnd, sentinelTool1, sentinelArgs1)
	if !ok || a.body != c.site1.body {
		return false
	}
	c.site2a = a
	if a.body == parse.BodyJSONList || a.body == parse.BodyPythonList {
		i := strings.Index(c.two[a.start:a.end], sentinelTool2)
		return i >= 0
	}
	b, ok := locateCall(c.two, a.end, c.twoEnd, sentinelTool2, sentinelArgs2)
	if !ok || b.body != a.body {
		return false
	}
	c.site2b = b
	return true
}

// oneLine shortens an error to its first line.
func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// isPlainTag reports whether s is an XML-like opening tag "<name>" (the
// only kind whose closing tag "</name>" can be inferred).
func isPlainTag(s string) bool {
	if len(s) < 3 || s[0] != '<' || s[len(s)-1] != '>' {
		return false
	}
	for _, r := range s[1 : len(s)-1] {
		if !(r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return false
		}
	}
	return true
}
