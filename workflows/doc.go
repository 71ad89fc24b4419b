// Package workflows holds the copilot's durable work, as Temporal workflows:
//
//   - ChatTurn answers one chat message: model calls and the tool calls they ask for, in a loop,
//     then the finalizer that stores the turn;
//   - MCPCall runs one tool call that came over MCP, through the same tool-call runner as a turn's
//     (tool_calls.go): one activity, a device tool fanned out per device, a destructive lab tool
//     behind an approval, or a configuration tool as a ConfigJob child;
//   - ConfigJob plans a configuration change, reads every device before, waits for the owner's
//     approval, applies per device, reads again and reports the diff;
//   - Exercise waits, for days if need be, for a student to ask for a check or a hint of an
//     injected fault.
//
// Approvals are an Update with a validator and a timer (approvals.go), so a wait holds no
// activity. Inputs carry ids and settings only; activities, in package activities, do everything
// that talks to the outside world and are registered under the names declared here. The code is
// deterministic; of ours it imports only package domain, beyond the Temporal SDK and uuid (a test
// holds it to that).
// VERSIONING.md says how a change stays replayable for the workflows already running, and when
// an old version branch may go.
package workflows
