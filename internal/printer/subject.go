package printer

import (
	"strings"
	"unicode/utf8"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// Group is the API group of the record's APIVersion: "apps" for "apps/v1",
// "" for the core group ("v1").
func (r *Record) Group() string {
	group, _, found := strings.Cut(r.APIVersion, "/")
	if !found {
		return ""
	}
	return group
}

// appendTypeName appends the lower-case kind, followed by ".<group>" for
// non-core kinds: "configmap", "deployment.apps". Without a kind it falls
// back to the resource.
func appendTypeName(dst []byte, r *Record) []byte {
	if r.Kind == "" {
		dst = textsafe.Append(dst, r.Resource)
	} else {
		dst = appendLower(dst, r.Kind)
	}
	if g := r.Group(); g != "" {
		dst = append(dst, '.')
		dst = textsafe.Append(dst, g)
	}
	return dst
}

// appendContext appends the record's context as a leading column of
// width characters and a space; nothing when width is 0 (one cluster).
func appendContext(dst []byte, r *Record, width int) []byte {
	if width <= 0 {
		return dst
	}
	start := len(dst)
	dst = textsafe.Append(dst, r.Context)
	for n := utf8.RuneCount(dst[start:]); n < width; n++ {
		dst = append(dst, ' ')
	}
	return append(dst, ' ')
}

// appendOwnerPath appends an owner chain as "deployment.apps web →
// replicaset.apps web-5f57bf4468": each owner's type name (as
// appendTypeName) and name, root first.
func appendOwnerPath(dst []byte, owners []Owner) []byte {
	for i := range owners {
		if i > 0 {
			dst = append(dst, " → "...)
		}
		o := &owners[i]
		dst = appendTypeName(dst, &Record{APIVersion: o.APIVersion, Kind: o.Kind})
		dst = append(dst, ' ')
		dst = textsafe.Append(dst, o.Name)
	}
	return dst
}

// appendSubject appends the record's key as short as is unambiguous: name,
// or namespace/name when several namespaces are watched.
func appendSubject(dst []byte, r *Record, allNamespaces bool) []byte {
	if allNamespaces && r.Namespace != "" {
		dst = textsafe.Append(dst, r.Namespace)
		dst = append(dst, '/')
	}
	return textsafe.Append(dst, r.Name)
}

// appendLower appends s in lower case (and terminal-safe).
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return textsafe.Append(dst, strings.ToLower(s))
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c < 0x20 || c == 0x7f:
			return textsafe.Append(dst, strings.ToLower(s))
		}
		dst = append(dst, c)
	}
	return dst
}

// isControl reports whether r would act on a terminal rather than show:
