// What serve and the copilot's own Temporal dev server (cmd/gns3-copilot-temporal) do to give
// memory back. A module of its own so that the dev server, whose module links the Temporal
// server and cannot share gns3-copilot's (DESIGN.md §5), uses the same code.
module github.com/gns3-copilot/gns3-copilot/internal/memtrim

go 1.25.0

require golang.org/x/sys v0.33.0
