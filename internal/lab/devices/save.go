package devices

import (
	"context"
	"fmt"
)

// SaveCommand is the command that makes the running configuration the one the device starts
// with, and whether it runs in configuration mode; "" when the platform has none (see
// Profile.Save).
func (p *Profile) SaveCommand() (cmd string, inConfig bool) { return p.Save, p.SaveInConfig }

// SaveConfig runs the platform's save on the session, in configuration mode where the platform
// saves from there. A platform without a save command is an error the caller reports as such:
// nothing was saved.
func (s *Session) SaveConfig(ctx context.Context) (CommandResult, error) {
	p := s.Profile()
	cmd, inConfig := p.SaveCommand()
	if cmd == "" {
		return CommandResult{}, fmt.Errorf("%s has no command that saves its configuration", p.Description)
	}
	if !inConfig {
		return s.Run(ctx, cmd)
	}
	results, err := s.Configure(ctx, []string{cmd})
	for _, r := range results {
		if r.Command == cmd {
			return r, err
		}
	}
	return CommandResult{Command: cmd, Failed: err != nil}, err
}
