// Package textsafe writes text that others wrote — field managers, health
// and Event messages — to a terminal: C0 and C1 control characters and DEL
// become Go escapes (\x1b, \n), as kubectl escapes them since the fix of
// CVE-2021-25743, so that no field can move the cursor, change colors or
// forge a line. JSON output does not go through it: it stays exact.
package textsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// IsControl reports whether r is a C0 or C1 control character or DEL.
func IsControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (0x80 <= r && r < 0xa0)
}

// mayNeed reports whether s may hold a control character: a byte below
// 0x20, DEL, or 0xc2, which starts U+0080–U+00BF in UTF-8.
func mayNeed(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == 0xc2 {
			return true
		}
	}
	return false
}

// Append appends s with its control characters escaped.
func Append(dst []byte, s string) []byte {
	if !mayNeed(s) {
		return append(dst, s...)
	}
	for _, r := range s {
		if !IsControl(r) {
			dst = utf8.AppendRune(dst, r)
			continue
		}
		switch r {
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			const hex = "0123456789abcdef" // every control character is below U+0100
			dst = append(dst, '\\', 'x', hex[r>>4], hex[r&0xf])
		}
	}
	return dst
}

// String is Append as a string; s itself when nothing needs escaping.
func String(s string) string {
	if !mayNeed(s) {
		return s
	}
	return string(Append(nil, s))
}

// OneLine is a message others wrote on one line: its runs of white space,
// new lines included, become one space.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ContextPrefix names a cluster in a message of a run over several
// kubeconfig contexts, `context "prod": `, the name quoted as Go quotes
// it; "" for the one cluster of a plain run.
func ContextPrefix(context string) string {
	if context == "" {
		return ""
	}
	return "context " + strconv.Quote(context) + ": "
}
