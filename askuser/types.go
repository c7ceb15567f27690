package askuser

import (
	"github.com/lubanhq/luban/api"
)

// IsAskTool reports whether name is one of the two ask tools.
func IsAskTool(name string) bool { return name == api.ToolAskUser || name == api.ToolAskUserBatch }
