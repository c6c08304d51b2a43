package serve

import (
	"encoding/json"
	"errors"
	"net/http"
)

// errKind is what went wrong, in words every API's error shape maps.
type errKind int

const (
	errInvalid  errKind = iota // the request
	errAuth                    // the key
	errBusy                    // the concurrency bound
	errUpstream                // the model server
	errNotFound                // a model the server does not have
)

// writeError answers in the caller's API's error shape.
func writeError(w http.ResponseWriter, api string, status int, kind errKind, field, msg string) {
	var body any
	switch api {
	case apiAnthropic:
		t := map[errKind]string{errInvalid: "invalid_request_error", errAuth: "authentication_error", errBusy: "rate_limit_error",
			errUpstream: "api_error", errNotFound: "not_found_error"}[kind]
		if field != "" {
			msg = field + ": " + msg
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": t, "message": msg}}
	case apiOllama:
		if field != "" {
			msg = field + ": " + msg
		}
		body = map[string]any{"error": msg}
	default:
		t := map[errKind]string{errInvalid: "invalid_request_error", errAuth: "authentication_error", errBusy: "rate_limit_exceeded",
			errUpstream: "upstream_error", errNotFound: "invalid_request_error"}[kind]
		e := map[string]any{"message": msg, "type": t, "param": nil, "code": nil}
		if field != "" {
			e["param"] = field
			e["message"] = field + ": " + msg
		}
		body = map[string]any{"error": e}
	}
	data, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// writeTurnError answers a failed turn.
func writeTurnError(w http.ResponseWriter, api string, err error) {
	status, kind := failure(err)
	msg := err.Error()
	var re *RequestError
	if errors.As(err, &re) {
		msg = re.Message
	}
	writeError(w, api, status, kind, fieldOf(err), msg)
}
