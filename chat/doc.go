// Package chat is the shared vocabulary of toolharness: messages, tool
// definitions, tool calls and tool results, and their JSON interchange forms.
//
// Every other package imports chat; chat imports nothing of ours. A tool's
// JSON Schema is kept whole as raw JSON (never decoded into a lossy struct),
// and a tool call keeps the exact raw text span the model produced, so that
// the transcript can be re-rendered byte for byte.
//
// # Interchange formats
//
// Messages and tools read and write the OpenAI chat shape, the interchange
// format of every CLI command:
//
//	{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
//	  "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}
//	{"role":"tool","tool_call_id":"call_1","content":"18°C"}
//	{"type":"function","function":{"name":"get_weather","description":"…","parameters":{…}}}
//
// On input, tool-call arguments may be a JSON object or a JSON string holding
// one; tools may also come in the Anthropic shape ({"name","description",
// "input_schema"}) or as Gemini function declarations
// ({"function_declarations":[…]}), see [ParseTools].
package chat
