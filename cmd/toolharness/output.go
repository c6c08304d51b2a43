package main

import (
	"io"

	"github.com/toolharness/toolharness/chat"
)

// writeJSONLine writes v as one line of JSON without HTML escaping.
func writeJSONLine(w io.Writer, v any) error {
	data, err := chat.Marshal(v)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	_, err = w.Write(data)
	return err
}
