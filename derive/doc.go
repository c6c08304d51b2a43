// Package derive learns how a model writes tool calls from its own chat
// template, by rendering probe conversations and diffing the renders (as
// llama.cpp's autoparser does), and describes the result as a parse.Syntax
// or, when the syntax is one a built-in format parses, as that format.
package derive
