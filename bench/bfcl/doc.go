// Package bfcl imports the Berkeley Function Calling Leaderboard's v1
// question format (ShishirPatil/gorilla, Apache-2.0) as a bench suite.
//
// BFCL writes parameter types of its own: dict (object), float (number),
// tuple (array), any (no type). They become JSON Schema. Its answers
// (possible_answer) list the accepted values of each parameter; "" among
// them means the parameter may be left out, and parallel answers are keyed
// name_1, name_2, …. They become argument matchers: one_of with BFCL's
// string standardisation (case, spaces and ,./-_*^ ignored), numbers
// compared by value (so 5 matches 5.0, as BFCL accepts an int for a float),
// no extra arguments allowed, calls in any order. Relevance questions
// expect no call.
package bfcl
