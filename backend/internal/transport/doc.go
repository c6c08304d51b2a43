// Package transport is the HTTP plumbing the model-server backends
// (backend/ollama, backend/openai, backend/llamacpp) share, so that they
// fail, wait and retry alike:
//
//   - Watchdog: the stall timeout. It derives the request's context from
//     the caller's and cancels it, with a *StallError as the cause, when no
//     data arrives for the timeout; Fail and Interrupted then tell a stall
//     from the caller's own cancellation.
//   - Retry: tries again with doubling backoff only failures that
//     backend.Retryable allows (nothing consumed, transient).
//   - ReadErrorBody: reads a bounded amount of a non-2xx answer, through
//     the watchdog, for the backend to dig the server's message out of.
//   - Delivery: hands streamed pieces to the caller's callback, keeps the
//     text and the time to the first chunk, and marks the callback's own
//     error (CallbackError) so it is returned unchanged, never retried.
//   - Or, HTTPClient: the defaults rule of the backends' Config fields.
//
// What is particular to one server (its wire format, its error shapes,
// which failures mean what before and after an answer) stays in that
// backend. The package is internal to backend/: its errors are
// *backend.Error values carrying the calling backend's name.
package transport
