// Package registry is the single truth about tools: registration and JSON
// Schema compilation, validation with errors written for the model, the
// retry policy, deferred tools loaded through tool_search, safe concurrent
// execution, the built-in tools and MCP tools.
//
// It knows nothing of prompts or servers.
package registry
