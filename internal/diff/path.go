package diff

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ParsePath splits a user-supplied path into its segments. Two forms are
// accepted:
//
//   - a JSON pointer (RFC 6901) when the path starts with "/":
//     "/metadata/labels/app.kubernetes.io~1name", with "~1" for "/" and "~0"
//     for "~";
//   - a dotted path otherwise: "metadata.managedFields",
//     "spec.containers[0].image", "metadata.labels[\"app.kubernetes.io/name\"]"
//     or "metadata.labels.app\.kubernetes\.io/name". A backslash escapes the
//     next character ("\." is a literal dot), "[N]" is a list index and
//     "[\"key\"]" a key written as a JSON string. One leading "." is allowed
//     (".spec.replicas", as in jsonpath).
//
// List indices become their decimal string ("0"), as in a JSON pointer, so
// "spec.containers[0]" and "/spec/containers/0" parse alike. The empty path
// is an error: it would name the whole object.
func ParsePath(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("empty path")
	}
	if strings.HasPrefix(s, "/") {
		return parsePointer(s)
	}
	return parseDotted(s)
}

// parsePointer splits an RFC 6901 JSON pointer into unescaped reference
// tokens. The empty pointer (the whole document) gives no tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("json pointer %q does not start with \"/\"", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, part := range parts {
		tok, err := unescapeToken(part)
		if err != nil {
			return nil, fmt.Errorf("json pointer %q: %w", p, err)
		}
		parts[i] = tok
	}
	return parts, nil
}

// unescapeToken undoes the RFC 6901 escaping of one reference token.
func unescapeToken(s string) (string, error) {
	if !strings.Contains(s, "~") {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '~' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return "", errors.New(`"~" at the end of a token (write "~0" for a literal "~")`)
		}
		switch s[i+1] {
		case '0':
			b.WriteByte('~')
		case '1':
			b.WriteByte('/')
		default:
			return "", fmt.Errorf("invalid escape %q (only \"~0\" and \"~1\" are allowed)", s[i:i+2])
		}
		i++
	}
	return b.String(), nil
}

// escapeToken applies the RFC 6901 escaping to one reference token.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pointer joins segments into an RFC 6901 JSON pointer.
func pointer(segs []string) string {
	n := 0
	for _, s := range segs {
		n += 1 + len(s)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(escapeToken(s))
	}
	return b.String()
}

// parseDotted parses the dotted form of ParsePath.
func parseDotted(s string) ([]string, error) {
	var segs []string
	i := 0
	if s[0] == '.' {
		i = 1
		if len(s) == 1 {
			return nil, fmt.Errorf("path %q: empty path", s)
		}
	}
	// expectSeg is true where a plain segment must follow (start, after a
	// dot); after "]" a dot, "[" or the end must follow.
	expectSeg := true
	for i < len(s) {
		switch s[i] {
		case '[':
			seg, n, err := parseBracket(s[i:])
			if err != nil {
				return nil, fmt.Errorf("path %q at offset %d: %w", s, i, err)
			}
			if expectSeg && len(segs) > 0 {
				return nil, fmt.Errorf("path %q at offset %d: empty segment before \"[\"", s, i)
			}
			segs = append(segs, seg)
			i += n
			expectSeg = false
			if i < len(s) {
				switch s[i] {
				case '.':
					i++
					expectSeg = true
					if i == len(s) {
						return nil, fmt.Errorf("path %q ends with \".\"", s)
					}
				case '[':
				default:
					return nil, fmt.Errorf("path %q at offset %d: expected \".\" or \"[\" after \"]\"", s, i)
				}
			}
		case '.':
			return nil, fmt.Errorf("path %q at offset %d: empty segment", s, i)
		default:
			if !expectSeg {
				return nil, fmt.Errorf("path %q at offset %d: expected \".\" or \"[\"", s, i)
			}
			var b strings.Builder
			for i < len(s) && s[i] != '.' && s[i] != '[' {
				if s[i] == '\\' {
					if i+1 >= len(s) {
						return nil, fmt.Errorf("path %q ends with a lone \"\\\"", s)
					}
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			segs = append(segs, b.String())
			expectSeg = false
			if i < len(s) && s[i] == '.' {
				i++
				expectSeg = true
				if i == len(s) {
					return nil, fmt.Errorf("path %q ends with \".\"", s)
				}
			}
		}
	}
	return segs, nil
}

// parseBracket parses "[N]" or "[\"key\"]" at the start of s and returns the
// segment and the number of bytes consumed.
func parseBracket(s string) (string, int, error) {
	if len(s) < 2 {
		return "", 0, errors.New(`unterminated "["`)
	}
	if s[1] == '"' {
		// Find the closing quote, skipping backslash escapes.
		j := 2
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return "", 0, errors.New("unterminated quoted key")
		}
		var key string
		if err := json.Unmarshal([]byte(s[1:j+1]), &key); err != nil {
			return "", 0, fmt.Errorf("invalid quoted key %s: %w", s[1:j+1], err)
		}
		if j+1 >= len(s) || s[j+1] != ']' {
			return "", 0, errors.New(`expected "]" after quoted key`)
		}
		return key, j + 2, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", 0, errors.New(`unterminated "["`)
	}
	idx := s[1:end]
	if !isIndex(idx) {
		return "", 0, fmt.Errorf("invalid index %q (want a non-negative integer or a quoted key)", idx)
	}
	// "[007]" is index 7; no conversion to int, so any length works.
	if idx = strings.TrimLeft(idx, "0"); idx == "" {
		idx = "0"
	}
	return idx, end + 1, nil
}

// isIndex reports whether s is a non-empty run of ASCII digits.
func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isCanonicalIndex reports whether s is an array index as RFC 6901 writes it:
// "0" or digits without a leading zero.
func isCanonicalIndex(s string) bool {
	return isIndex(s) && (s == "0" || s[0] != '0')
}

// pathTrie holds the ignored paths as a tree of segments. A nil *pathTrie
// means nothing is ignored at or below the current node.
type pathTrie struct {
	// end is set when the path leading here is ignored (with everything
	// below it).
	end  bool
	kids map[string]*pathTrie
}

// newPathTrie parses the ignore paths. Paths that do not parse are skipped:
// callers validate user input with ParsePath first.
func newPathTrie(paths []string) *pathTrie {
	var root *pathTrie
	for _, p := range paths {
		segs, err := ParsePath(p)
		if err != nil {
			continue
		}
		if root == nil {
			root = &pathTrie{}
		}
		n := root
		for _, s := range segs {
			if n.end {
				break
			}
			if n.kids == nil {
				n.kids = make(map[string]*pathTrie)
			}
			k := n.kids[s]
			if k == nil {
				k = &pathTrie{}
				n.kids[s] = k
			}
			n = k
		}
		n.end = true
		n.kids = nil
	}
	return root
}

// child returns the node for segment s below t, or nil.
func (t *pathTrie) child(s string) *pathTrie {
	if t == nil || t.kids == nil {
		return nil
	}
	return t.kids[s]
}

// ignored reports whether the node's path is ignored.
func (t *pathTrie) ignored() bool {
	return t != nil && t.end
}
