// Package parse turns a model's raw text, arriving in arbitrary chunks, into
// content text and tool calls: one streaming parser per tool-call format,
// typed error events, lenient repairs and schema-driven value decoding.
//
// It knows nothing of servers or prompts.
package parse
