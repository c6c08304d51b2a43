package parse

import "strings"

// Named formats built on the Syntax engine: the syntaxes of model
// families whose markers are their own special tokens, described once
// here and read by the same scanner, blocks and decoders as a syntax
// derived from a template (syntax_parser.go, decode_syntax.go).
//
//	deepseek       <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//	               (V3, R1 and its distills), NAME<｜tool▁sep｜>{…} in the same markers (V3.1),
//	               and V3.2's DSML: <｜DSML｜function_calls><｜DSML｜invoke name="NAME">
//	               <｜DSML｜parameter name="k" string="true|false">v</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>
//	kimi-k2        <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{…}<|tool_call_end|><|tool_calls_section_end|>
//	functionary    >>>NAME\n{…}   (v3.2; >>>all\n is its content channel)
//	functiongemma  <start_function_call>call:NAME{k:<escape>v<escape>,n:5}<end_function_call>
//	minimax-m2     <minimax:tool_call><invoke name="NAME"><parameter name="k">v</parameter></invoke></minimax:tool_call>
//	seed-oss       <seed:tool_call><function=NAME><parameter=k>v</parameter></function></seed:tool_call>
//
// auto also reads syntaxes that have no format of their own:
// <|tool_call|>[{…}]<|/tool_call|> (Phi-4-mini; Granite 3.x writes no
// close), Apriel's <tool_calls>[{…}]</tool_calls> and Gemma 4's
// <|tool_call>call:NAME{k:<|"|>v<|"|>}<tool_call|>; auto and pythonic
// read LFM2's <|tool_call_start|>[f(a=1)]<|tool_call_end|>.
//
// Lenient, each also accepts its markers in the spellings models and
// conversions write besides the template's (marker_spelling): DeepSeek's
// with ASCII bars (<|tool▁calls▁begin|>), Kimi's section markers in the
// singular (<|tool_call_section_begin|>, which vLLM's parser accepts too).
// Values of pairs (DSML's text values, minimax-m2, seed-oss) are read with
// the tool's schema, as in qwen3-coder; minimax-m2 and seed-oss values
// lose one newline after their key and one before their close when the
// model writes them there (as vLLM's parsers of these models do).

// family is one syntax of a named format and what the format adds to it.
type family struct {
	syn Syntax
	// alts are other heads its calls may have in the same markers: only
	// the name and argument affixes of each are used.
	alts []Syntax
	// spellings are the misspellings of the markers accepted leniently,
	// each as strings.NewReplacer's old/new pairs.
	spellings [][]string
	// The synSpec knobs (see synSpec).
	headID, tight, gemma bool
	notNames             []string
	typeAttr             string
	// sectionsInAuto: auto takes only the section openers, since
	// auto's own <invoke name= and <function= read a call written
	// without its section.
	sectionsInAuto bool
	// trailer is a closing marker accepted right after the call's value
	// (a syntax without CallClose), part of the call block.
	trailer string
	// tentative: the marker is no special token, so a block it opens
	// is text unless it holds a call (opener.tentative).
	tentative bool
	// jsonLists: leniently, its Python body may be JSON call objects
	// (synSpec.jsonLists).
	jsonLists bool
}

var deepseekFamily = family{
	syn: Syntax{Label: "deepseek",
		SectionOpen: "<｜tool▁calls▁begin｜>", SectionClose: "<｜tool▁calls▁end｜>",
		CallOpen: "<｜tool▁call▁begin｜>", CallClose: "<｜tool▁call▁end｜>", CallSeparator: "\n",
		Body: BodyNameJSON, NamePrefix: "function<｜tool▁sep｜>", NameSuffix: "\n", ArgsPrefix: "```json\n", ArgsSuffix: "\n```"},
	// V3.1 writes the name, the separator and the arguments.
	alts: []Syntax{{ArgsPrefix: "<｜tool▁sep｜>"}},
	// ASCII bars, and the section marker as R1 distills misspell it
	// (spellings llama.cpp's DeepSeek R1 parser accepts; not its
	// "<｜tool calls begin｜>": a marker's first piece, "<｜tool", would
	// be repeated by every other marker and end the section at once).
	spellings: [][]string{{"｜", "|"},
		{"<｜tool▁calls▁begin｜>", "<｜tool_calls_begin｜>"}, {"<｜tool▁calls▁begin｜>", `<｜tool\_calls\_begin｜>`},
		{"<｜tool▁calls▁begin｜>", "<｜tool▁calls｜>"}},
}

var dsmlFamily = family{
	syn: Syntax{Label: "deepseek",
		SectionOpen: "<｜DSML｜function_calls>", SectionClose: "</｜DSML｜function_calls>",
		CallOpen: `<｜DSML｜invoke name="`, CallClose: "</｜DSML｜invoke>", CallSeparator: "\n",
		Body: BodyPairs, NameSuffix: `">`,
		KeyOpen: `<｜DSML｜parameter name="`, KeyClose: `"`, ValueOpen: ">", ValueClose: "</｜DSML｜parameter>"},
	typeAttr:  "string",
	spellings: [][]string{{"｜", "|"}},
}

var kimiFamily = family{
	syn: Syntax{Label: "kimi-k2",
		SectionOpen: "<|tool_calls_section_begin|>", SectionClose: "<|tool_calls_section_end|>",
		CallOpen: "<|tool_call_begin|>", CallClose: "<|tool_call_end|>",
		Body: BodyNameJSON, NamePrefix: "functions.", IDPrefix: ":", ArgsPrefix: "<|tool_call_argument_begin|>"},
	headID: true,
	spellings: [][]string{{"<|tool_calls_section_begin|>", "<|tool_call_section_begin|>",
		"<|tool_calls_section_end|>", "<|tool_call_section_end|>"}},
}

var minimaxFamily = family{
	syn: Syntax{Label: "minimax-m2",
		SectionOpen: "<minimax:tool_call>", SectionClose: "</minimax:tool_call>",
		CallOpen: `<invoke name="`, CallClose: "</invoke>", CallSeparator: "\n",
		Body: BodyPairs, NameSuffix: `">`, KeyOpen: `<parameter name="`, KeyClose: "\">\n", ValueClose: "\n</parameter>"},
	sectionsInAuto: true,
}

var seedFamily = family{
	syn: Syntax{Label: "seed-oss",
		SectionOpen: "<seed:tool_call>", SectionClose: "</seed:tool_call>",
		CallOpen: "<function=", CallClose: "</function>", CallSeparator: "\n",
		Body: BodyPairs, NameSuffix: ">", KeyOpen: "<parameter=", KeyClose: ">\n", ValueClose: "\n</parameter>"},
	sectionsInAuto: true,
}

var functionaryFamily = family{
	syn:      Syntax{Label: "functionary", CallOpen: ">>>", NameSuffix: "\n", Body: BodyNameJSON},
	tight:    true,
	notNames: []string{"all"},
}

var functionGemmaFamily = family{
	syn: Syntax{Label: "functiongemma", CallOpen: "<start_function_call>", CallClose: "<end_function_call>",
		Body: BodyNameJSON, NamePrefix: "call:"},
	gemma: true,
}

// gemma4Family is Gemma 4's calls, read by auto: FunctionGemma's
// notation with Gemma 4's tokens and its <|"|> quote token.
var gemma4Family = family{
	syn: Syntax{Label: "gemma4", CallOpen: "<|tool_call>", CallClose: "<tool_call|>",
		Body: BodyNameJSON, NamePrefix: "call:", Quote: `<|"|>`},
}

// toolCallTokenFamily is the JSON list of calls after <|tool_call|>, a
// special token of Granite 3.x (which ends the list with nothing) and of
// Phi-4-mini (which closes it: <|tool_call|>[…]<|/tool_call|>). The
// closer, when written, is part of the call block.
var toolCallTokenFamily = family{
	syn:     Syntax{Label: "tool_call-token", CallOpen: "<|tool_call|>", Body: BodyJSONList},
	trailer: "<|/tool_call|>",
}

// aprielFamily is Apriel's <tool_calls>[…]</tool_calls>. The tag is
// plain text to other models (and prose mentions it), so a block is a
// call only when a list of call objects follows it.
var aprielFamily = family{
	syn:       Syntax{Label: "apriel", CallOpen: "<tool_calls>", CallClose: "</tool_calls>", Body: BodyJSONList},
	tentative: true,
}

// lfm2Family is LFM2's Python call list between its own special tokens,
// <|tool_call_start|>[f(a=1)]<|tool_call_end|>, what LFM2 models write
// whatever their template says.
var lfm2Family = family{
	syn:       Syntax{Label: "lfm2", CallOpen: "<|tool_call_start|>", CallClose: "<|tool_call_end|>", Body: BodyPythonList},
	jsonLists: true,
}

// familiesOf returns the syntaxes of a named format built on them.
func familiesOf(format string) []family {
	switch format {
	case "deepseek":
		return []family{deepseekFamily, dsmlFamily}
	case "kimi-k2":
		return []family{kimiFamily}
	case "functionary":
		return []family{functionaryFamily}
	case "functiongemma":
		return []family{functionGemmaFamily}
	case "minimax-m2":
		return []family{minimaxFamily}
	case "seed-oss":
		return []family{seedFamily}
	case "pythonic":
		return []family{lfm2Family}
	case "auto":
		return []family{deepseekFamily, dsmlFamily, kimiFamily, functionaryFamily, functionGemmaFamily, gemma4Family, minimaxFamily, seedFamily,
			toolCallTokenFamily, aprielFamily, lfm2Family}
	}
	return nil
}

// familyOpeners gives the openers of format's syntaxes: each syntax as
// written and, lenient, in each misspelling of its markers.
func familyOpeners(format string, lenient bool) []opener {
	var ops []opener
	for _, f := range familiesOf(format) {
		add := func(os []opener, rep repairs) {
			for _, op := range os {
				if format == "auto" && f.sectionsInAuto && !op.section {
					continue
				}
				op.repair |= rep
				op.tentative = op.tentative || f.tentative
				if f.trailer != "" {
					op.trailer = f.trailer
				}
				ops = append(ops, op)
			}
		}
		add(f.spec(nil, lenient).openers(lenient), 0)
		if !lenient {
			continue
		}
		for _, sp := range f.spellings {
			add(f.spec(strings.NewReplacer(sp...), lenient).openers(lenient), rMarkerSpelling)
		}
	}
	return ops
}

// spec prepares the family's syntax, its markers respelled by r (nil:
// as written), for a lenient or a strict parser.
func (f family) spec(r *strings.Replacer, lenient bool) *synSpec {
	knobs := func(s *synSpec) *synSpec {
		s.headID, s.tight, s.gemma, s.notNames, s.typeAttr = f.headID, f.tight, f.gemma, f.notNames, f.typeAttr
		s.jsonLists = lenient && f.jsonLists
		return s
	}
	sp := knobs(newSynSpec(respell(f.syn, r)))
	for _, a := range f.alts {
		s := f.syn
		s.NamePrefix, s.NameSuffix, s.IDPrefix, s.ArgsPrefix, s.ArgsSuffix = a.NamePrefix, a.NameSuffix, a.IDPrefix, a.ArgsPrefix, a.ArgsSuffix
		sp.alts = append(sp.alts, knobs(newSynSpec(respell(s, r))))
	}
	return sp
}

// respell returns s with r applied to every marker and affix.
func respell(s Syntax, r *strings.Replacer) Syntax {
	if r == nil {
		return s
	}
	for _, f := range []*string{&s.SectionOpen, &s.SectionClose, &s.CallOpen, &s.CallClose, &s.NamePrefix, &s.NameSuffix,
		&s.IDPrefix, &s.ArgsPrefix, &s.ArgsSuffix, &s.KeyOpen, &s.KeyClose, &s.ValueOpen, &s.ValueClose} {
		*f = r.Replace(*f)
	}
	return s
}
