package config

import (
	"fmt"
	"strings"
)

// expand replaces ${VAR} and ${VAR:-default} in s with the environment's
// value and $$ with a single $. A $ followed by anything else is kept. VAR
// must be a shell-style name ([A-Za-z_][A-Za-z0-9_]*). A variable that is
// unset or empty takes the default (as in the shell's ${VAR:-default});
// without a default it is an error.
func expand(s string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("%q: ${ without a closing }", clip(s))
			}
			inner := s[i+2 : i+2+end]
			name, def, hasDef := strings.Cut(inner, ":-")
			if !isEnvName(name) {
				return "", fmt.Errorf("${%s}: %q is not a variable name", clip(inner), clip(name))
			}
			v := getenv(name)
			switch {
			case v != "":
				b.WriteString(v)
			case hasDef:
				b.WriteString(def)
			default:
				return "", fmt.Errorf("${%s} is not set in the environment or empty (write ${%s:-default} for a default)", name, name)
			}
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// clip bounds text quoted in an error message.
func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
