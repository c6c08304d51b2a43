package registry

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/invopop/jsonschema"

	"github.com/toolharness/toolharness/chat"
)

// SchemaFor derives the JSON Schema of T's fields (a struct), inline and
// without $schema/$id, ready for chat.Tool.Parameters. Field order is kept;
// fields without omitempty are required; additional properties are refused.
// Descriptions come from `jsonschema:"description=…"` tags.
func SchemaFor[T any]() (json.RawMessage, error) {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	var zero T
	s := r.Reflect(&zero)
	s.Version = ""
	s.ID = ""
	data, err := chat.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("registry: schema for %T: %w", zero, err)
	}
	return data, nil
}

// RegisterFunc registers a tool whose arguments decode into T, with the
// schema derived from T. spec supplies the optional fields (SideEffects,
// Deferred, Timeout); its Tool and Handler are set here.
func RegisterFunc[T any](r *Registry, name, description string, h func(ctx context.Context, args T) (string, error), spec Spec) error {
	schema, err := SchemaFor[T]()
	if err != nil {
		return err
	}
	spec.Tool = chat.Tool{Name: name, Description: description, Parameters: schema}
	spec.Handler = func(ctx context.Context, raw json.RawMessage) (string, error) {
		var a T
		if err := json.Unmarshal(raw, &a); err != nil {
			return "", fmt.Errorf("registry: %s arguments: %w", name, err)
		}
		return h(ctx, a)
	}
	return r.Register(spec)
}
