// Package corpusgen builds testdata/bench/corpus.jsonl, the input of
// `toolharness bench corpus` on a fresh machine, from the real recorded
// outputs in testdata/corpus/ (with their attribution README), and compares
// the benchmark's scoring with the labels the original benchmarks gave.
//
// Regenerate with `go test ./bench/corpusgen -update`; the test fails when
// the committed file differs from what the generator makes.
//
// Expectations come only from the original labels:
//   - MikeVeerman/tool-calling-benchmark: its restraint prompts (indices 4
//     and 8 of lib/bench_config.py) expect no call; its three "hard"
//     prompts (9, 10, 11) expect the tool of expected_tools. The other
//     prompts carry no expectation (that benchmark scores them on its own
//     criteria). Records of its "ollama" backend where Ollama's native tool
//     calling found a call carry none either: the call came back
//     structured, and raw holds only the content beside it.
//   - hanXen/vllm-qwen2.5-coder-tool-parser: the conversational queries of
//     its integration runs, where every labelled run made no call, expect no
//     call; a query whose raw output is whole (the output_format runs)
//     expects the tool names vLLM's parser extracted most often for that
//     query across all labelled runs. Records where vLLM extracted calls
//     keep no expectation: their raw is the text vLLM left after removing
//     the calls, so the calls are not in it; nor do records that end with
//     the model's </think> block and hold nothing after it.
package corpusgen
