package diff

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DottedPath renders o.Path for humans, in a form ParsePath reads back:
// "/spec/replicas" becomes "spec.replicas", "/spec/containers/0/image"
// becomes "spec.containers[0].image", and keys that are empty or hold a dot,
// a slash, white space, brackets, quotes, backslashes or control characters
// are written as JSON strings in brackets:
// `metadata.labels["app.kubernetes.io/name"]`. The whole document ("") is
// ".". A path that is not a valid JSON pointer is returned as it is.
func (o Operation) DottedPath() string {
	segs, err := parsePointer(o.Path)
	if err != nil {
		return o.Path
	}
	if len(segs) == 0 {
		return "."
	}
	var b strings.Builder
	b.Grow(len(o.Path) + 8)
	for i, s := range segs {
		switch {
		case isCanonicalIndex(s):
			b.WriteByte('[')
			b.WriteString(s)
			b.WriteByte(']')
		case isPlainKey(s):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		default:
			b.WriteByte('[')
			var q bytes.Buffer
			if err := writeJSON(&q, s); err != nil {
				// Strings always encode; keep a readable fallback anyway.
				fmt.Fprintf(&b, "%q", s)
			} else {
				b.Write(q.Bytes())
			}
			b.WriteByte(']')
		}
	}
	return b.String()
}

// isPlainKey reports whether a key can be written bare in a dotted path.
func isPlainKey(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch r {
		case '.', '/', '[', ']', '"', '\\':
			return false
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// FormatValue renders a JSON value for a text diff line: strings as JSON
// strings ("web", with \n and quotes escaped so the line stays one line),
// numbers, booleans and null as JSON, maps and lists as compact JSON. The
// result is cut to at most maxLen runes, ending in "…", when longer;
// maxLen <= 0 means no limit.
func FormatValue(v any, maxLen int) string {
	var buf bytes.Buffer
	var s string
	if err := writeJSON(&buf, v); err != nil {
		// Not representable in JSON (NaN, a channel…): show it Go style.
		s = fmt.Sprint(v)
	} else {
		s = buf.String()
	}
	return truncate(s, maxLen)
}

// truncate cuts s to at most maxLen runes, the last being "…".
func truncate(s string, maxLen int) string {
	if maxLen <= 0 || utf8.RuneCountInString(s) <= maxLen {
		return s
	}
	// Byte offset of the first rune past the kept maxLen-1 runes.
	n := 0
	for i := range s {
		if n == maxLen-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// Text renders the operation as the body of a text diff line, without
// indentation or color; values are cut to maxLen runes (see FormatValue):
//
//	~ spec.replicas: 1 → 3
//	+ metadata.labels.tier: "web"
//	- data.old
//	~ data.password: (changed)      redacted replace
//	+ data.password: (set)          redacted add
//	- data.password                 redacted remove
func (o Operation) Text(maxLen int) string {
	p := o.DottedPath()
	switch o.Op {
	case OpReplace:
		if o.Redacted {
			return "~ " + p + ": (changed)"
		}
		return "~ " + p + ": " + FormatValue(o.Old, maxLen) + " → " + FormatValue(o.Value, maxLen)
	case OpAdd:
		if o.Redacted {
			return "+ " + p + ": (set)"
		}
		return "+ " + p + ": " + FormatValue(o.Value, maxLen)
	case OpRemove:
		return "- " + p
	}
	if o.Redacted {
		return string(o.Op) + " " + p
	}
	return string(o.Op) + " " + p + ": " + FormatValue(o.Value, maxLen)
}
