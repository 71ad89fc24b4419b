// Package durable is how the copilot starts and talks to its durable work, the Temporal
// workflows of chat turns, MCP calls and exercises: the Launcher starts work for a user (its row
// under the user's cap, the credential stored worker-side, the workflow, and the undo of all of
// it on failure), and Temporal is the one client that starts, updates, cancels and describes
// those workflows. It knows nothing of HTTP; handlers use it through small interfaces.
package durable
