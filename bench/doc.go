// Package bench measures tool calling: suites of cases, the run matrix over
// models, formats, modes and endpoints, metrics with confidence intervals,
// resumable results and reports, live or from recorded outputs.
package bench
