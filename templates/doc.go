// Package templates holds one chat-template definition per model family as
// embedded files: turn wrapping, control tokens, stop tokens, the family's
// native tool format, and fingerprints to detect a family from an official
// template's text.
//
// It knows nothing of servers or parsing.
package templates
