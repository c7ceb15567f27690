package askuser

import "github.com/lubanhq/luban/api"

// ParseArgsSchema is ParseArgs through the JSON Schema path only: the
// oracle decodeAskUser is compared with.
func ParseArgsSchema(tool, raw string) (*api.Prompt, error) { return parseArgs(tool, raw, false) }

// DecodesFast reports whether ParseArgs reads raw, ask_user arguments,
// without the schema path.
func DecodesFast(raw string) bool {
	_, ok := decodeAskUser(raw)
	return ok
}
