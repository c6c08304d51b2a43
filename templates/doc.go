// Package templates holds one chat-template definition per model family as
// embedded files: turn wrapping, control tokens, stop tokens, the family's
// native tool format, and fingerprints to detect a family from an official
// template's text.
//
// It knows nothing of servers or parsing.
//
// # Families
//
// Each family is two files under families/: NAME.yaml (the [Family]
// definition: BOS, EOS, role markers, end of turn, generation prompt, stop
// and control tokens, native and default tool format, where tools, calls
// and results go, detection fingerprints, documented quirks) and a
// text/template file that reproduces the official Hugging Face chat
// template byte for byte. Adding a family is adding those two files (and
// its reference renderings to testdata/gen.py).
//
// The templates are transliterations of the official Jinja: every action
// trims whitespace ({{- … -}}) and literal text is written as quoted
// strings, so the layout of the file never leaks into the output. The data
// they see is prepared generically ([Input] → messages with first/last and
// neighbours, arguments and schemas as ordered JSON), and the functions
// they call are named after the Jinja filters they stand for: tojson
// (Python's json.dumps: ", " and ": " separators, no HTML escaping, raw
// non-ASCII, insertion order, numbers as written, see [PyJSON]), string
// (Python's str), trim, strftime (from Input.Now; no clock is read here),
// raise (an error the official template raises too, [TemplateError]).
//
// # Conformance
//
// testdata/golden holds, for every family, the official template rendered
// by the real Jinja2 engine (configured as transformers configures it) over
// testdata/conversations.json; the tests compare byte for byte, and expect
// an error where the official template raises. Known deviations, where the
// official template raises but toolharness renders, are listed in the test
// (hermes3 without tools).
//
// # Detection
//
// [Detect] recognises the family of an HF Jinja or Ollama Go template from
// fingerprints (sets of strings that must all occur); the most specific
// matching set wins, and [ErrUnknownTemplate] says plainly when none
// matches.
package templates
