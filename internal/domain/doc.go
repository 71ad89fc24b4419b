// Package domain holds the words the copilot's packages must agree on: the copilot modes, the
// tool names and kinds that decide how a tool call runs, the statuses of turns, MCP calls,
// configuration jobs, approvals and exercises, the error types activities report to workflows,
// and the device plan that travels through workflow histories. It imports only the standard
// library, so every package, the deterministic workflows included, can use it, and the compiler,
// not a test, keeps them saying the same thing.
package domain
