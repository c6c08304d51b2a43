// Package jsonerr words encoding/json's decode errors for the person who
// wrote the input: "a JSON array, not an object" and `"raw" must be a
// string, not a number` instead of "cannot unmarshal array into Go value
// of type main.batchIn". Commands that read JSON lines (parse --jsonl,
// bench corpus) share it so the two say the same thing.
package jsonerr
