package label

import (
	"fmt"

	"github.com/gaffer-dev/gaffer/agent"
)

// Of names session s in progress lines.
func Of(s agent.Session) string {
	if s.Role == agent.RoleArchitect {
		return fmt.Sprintf("architect r%d", s.Revision)
	}
	l := fmt.Sprintf("%s p%d a%d", s.Role, s.Phase, s.Attempt)
	if s.Iteration > 0 {
		l += fmt.Sprintf(" i%d", s.Iteration)
	}
	return l
}
