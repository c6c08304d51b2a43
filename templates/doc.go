// Package templates renders chat templates: any model's own Hugging Face
// template with a Jinja engine configured as transformers configures
// Jinja2, and one definition per built-in model family (turn wrapping,
// control tokens, stop tokens, native tool format, detection). It knows
// nothing of servers or parsing.
//
// # The Jinja engine
//
// [CompileJinja] compiles a chat template for github.com/ardanlabs/jinja
// with transformers' configuration (trim_blocks, lstrip_blocks, loop
// controls, {% generation %}, raise_exception as [TemplateError],
// strftime_now from [JinjaVars].Now, Python tojson, and the format filter
// the engine lacks). Where the engine
// deviates from Jinja2 the source is normalised first, each rewrite exact
// (whitespace control applied as Jinja2's lexer applies it, final newline,
// CRLF, backslash-newline in literals, undefined values iterable), macros
// get a recursion limit (the engine has none and would overflow the
// stack), and [Jinja.Deviations] reports what still renders differently.
// testdata/conformance measures it: 75 templates × 23 conversations
// against Jinja2 goldens, the deviations listed in deviations.json and
// asserted by the test; testdata/unseen does the same for reconstructions
// of current templates the shared set lacks.
//
// # Families
//
// Each family is a definition under families/ (NAME.yaml: BOS, EOS, role
// markers, end of turn, generation prompt, stop and control tokens,
// native and default tool format, placement, detection fingerprints,
// quirks, the tokenizer's special tokens and the input conventions of its
// official template) and its template: the official chat template itself
// (NAME.jinja, rendered by the engine) or, where the engine cannot match
// what the family must render, a text/template transliteration
// (NAME.tmpl; hermes3 and gpt-oss, see docs/templates.md). The
// transliterations are written in the style of the official Jinja: every
// action trims, literal text is quoted, and their functions are named
// after the Jinja filters they stand for (tojson as Python's json.dumps,
// see [PyJSON]; raise as [TemplateError]).
//
// [FamilyOf] turns any loaded template into a [Family]: a detected
// built-in family's definition rendered with the loaded template, or a
// Family whose stops, generation prompt and control tokens come from the
// template and its tokens (native format "" until the call syntax is
// derived). Package templates/ollamatmpl does the same for a model known
// only by its Ollama Go template, executed in-process by Ollama's template
// package ([Family.WithRenderer]); package templates/source loads
// templates from files, folders, GGUF and Ollama's model store.
//
// # Conformance
//
// testdata/golden holds, for every family, the official template rendered
// by the real Jinja2 engine over testdata/conversations.json; the tests
// compare byte for byte, and expect an error where the official template
// raises. Known deviations, where the official template raises but
// toolharness renders, are listed in the test (hermes3 without tools).
//
// # Detection
//
// [Detect] recognises the family of an HF Jinja or Ollama Go template from
// fingerprints (sets of strings that must all occur); the most specific
// matching set wins, and [ErrUnknownTemplate] says plainly when none
// matches.
package templates
