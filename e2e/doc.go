// Package e2e holds the end-to-end tests of the whole copilot: the real service (API, worker,
// Temporal dev server, database, event log) against a fake GNS3 controller and a scripted
// model, seen from an HTTP client.
package e2e
