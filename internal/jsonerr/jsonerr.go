package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Describe returns the user-facing text of a json.Unmarshal error into a
// struct (a record); other errors keep their own text.
func Describe(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error() // syntax errors already read well
	}
	if te.Field == "" {
		return fmt.Sprintf("a JSON %s, not an object", te.Value)
	}
	return fmt.Sprintf("%q must be %s, not %s", te.Field, kind(te.Type.Kind().String()), article(te.Value))
}

// kind names a Go kind as a JSON type.
func kind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "a list"
	case "bool":
		return "true or false"
	case "int", "int64", "int32", "float64", "float32", "uint", "uint64":
		return "a number"
	}
	return "a " + k
}

func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	}
	return "a " + v
}
