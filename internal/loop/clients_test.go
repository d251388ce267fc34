package loop

import (
	"github.com/whetstone-dev/whetstone/internal/client/claudecode"
	"github.com/whetstone-dev/whetstone/internal/client/opencode"
)

// The clients whose words the instructions' tests read.
var (
	ClaudeCode Client = claudecode.Client{}
	OpenCode   Client = opencode.Client{}
)
