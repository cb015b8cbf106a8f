package diff

import (
	"encoding/json"
	"strings"
)

// DottedPath renders o.Path for humans: "/spec/replicas" becomes
// "spec.replicas". (Stub: the diff engine issue refines escaping and indices.)
func (o Operation) DottedPath() string {
	return strings.ReplaceAll(strings.TrimPrefix(o.Path, "/"), "/", ".")
}

// FormatValue renders a JSON value for a text diff line, truncated to at
// most maxLen runes with "…" when longer. (Stub.)
func FormatValue(v any, maxLen int) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if r := []rune(s); maxLen > 0 && len(r) > maxLen {
		return string(r[:maxLen-1]) + "…"
	}
	return s
}
