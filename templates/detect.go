package templates

import (
	"errors"
	"strings"
)

// ErrUnknownTemplate is returned by Detect when no family's fingerprints
// match.
var ErrUnknownTemplate = errors.New("templates: unknown template: no family's fingerprints match")

// Detection is what Detect recognised in a template's text.
type Detection struct {
	Family string `json:"family"`
	// Format is the family's native tool format ("" without native tools).
	Format string `json:"format"`
	// DefaultFormat is the format toolharness uses for the family.
	DefaultFormat string `json:"default_format"`
	// Syntax is "jinja" (Hugging Face), "go" (Ollama) or "unknown".
	Syntax string `json:"syntax"`
	// Matched are the fingerprint strings found.
	Matched []string `json:"matched"`
}

// Detect recognises the family of an official chat template, Hugging Face
// Jinja or Ollama Go template, from fingerprints of its text. When several
// families match, the most specific fingerprint set (most strings, then
// most bytes) wins.
func Detect(text string) (Detection, error) {
	fams, err := Families()
	if err != nil {
		return Detection{}, err
	}
	var best Detection
	bestScore := 0
	for _, f := range fams {
		for _, set := range f.Fingerprints {
			if len(set) == 0 || !containsAll(text, set) {
				continue
			}
			score := 0
			for _, s := range set {
				score += 1000 + len(s)
			}
			if score > bestScore {
				bestScore = score
				best = Detection{Family: f.Name, Format: f.NativeFormat, DefaultFormat: f.DefaultFormat, Matched: set}
			}
		}
	}
	if bestScore == 0 {
		return Detection{Syntax: syntaxOf(text)}, ErrUnknownTemplate
	}
	best.Syntax = syntaxOf(text)
	return best, nil
}

func containsAll(text string, subs []string) bool {
	for _, s := range subs {
		if !strings.Contains(text, s) {
			return false
		}
	}
	return true
}

func syntaxOf(text string) string {
	switch {
	case strings.Contains(text, "{%"):
		return "jinja"
	case strings.Contains(text, "{{ .") || strings.Contains(text, "{{- .") || strings.Contains(text, ".Messages") || strings.Contains(text, "{{ if") || strings.Contains(text, "{{- if"):
		return "go"
	}
	return "unknown"
}
