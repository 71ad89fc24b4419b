package workflows

import (
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// deviceTimeout is how long one device's activity may run. Plans recorded before the plan
// activity computed it get the bound a platform without a profile gets: connecting plus 30
// seconds a command.
func deviceTimeout(job domain.DeviceJob) time.Duration {
	if job.Timeout > 0 {
		return job.Timeout
	}
	return 30*time.Second + time.Duration(len(job.Commands))*30*time.Second
}
