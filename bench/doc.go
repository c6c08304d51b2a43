// Package bench measures tool calling: suites of cases, the run matrix over
// models, formats, modes and endpoints, metrics with confidence intervals,
// resumable results and reports, live or from recorded outputs.
//
// # Pieces
//
//   - Suites ([Suite], [Case], [Expectation]): YAML or JSON files
//     ([ParseSuite], [ReadSuiteFile]) and the built-in suite embedded from
//     suites/default.yaml ([DefaultSuite]). Argument matchers: exact,
//     one_of, regex, approx with tolerance, any; optional and normalize
//     modifiers. BFCL questions convert with package bench/bfcl.
//   - Judging ([Judge]): one attempt's lenient parse against the case's
//     expectation gives a [Verdict] (ok, parse_failure, schema_invalid,
//     missed_call, false_call, wrong_tool, wrong_args, wrong_count).
//     [StrictFailureKind] says why the strict parser failed where it did.
//   - Recorded outputs ([ScoreCorpus]): `parse --jsonl` records with
//     optional model and expectations, parsed strictly and leniently by a
//     [Parser] ([NewParser] wraps package parse) and validated by a
//     [Validator] ([NewRegistryValidator] wraps package registry).
//   - Live runs ([Run]): every case in every [Cell] (model × format ×
//     mode), repeated, spread over [Endpoint]s by one work queue. Each case
//     is run by a [Driver] ([AgentDriver] runs agent.RunCase). A case's
//     records are written together and fsynced ([ResultsWriter]); a
//     canceled run leaves only whole cases, and Resume runs exactly the
//     missing ones. [ProgressPrinter] shows progress.
//   - Results and metrics ([Record], [ReadResults], [Summarize]): one
//     [Group] per model × format × mode with Wilson intervals (package
//     bench/stats) and pairwise [FormatComparison]s. Package bench/report
//     writes summary.json, summary.csv, summary.md and report.html.
//
// Denominators are documented on [Group]; the statistics in docs/bench.md.
package bench
