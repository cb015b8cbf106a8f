package stage

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// A Secret's values are never printed unless --show-secret-data: the
// values of data and stringData, and the last-applied-configuration
// annotation, which holds the whole applied Secret. Keys stay, so readers
// see which entries exist. Both the printed object (redactSecretJSON) and
// diffs (isSecretValuePath) follow this one rule.

// redactedValue replaces every redacted Secret value.
const redactedValue = "<redacted>"

// isSecret reports whether t is core/v1 Secrets.
func isSecret(t informer.Target) bool {
	return t.Resource.Group == "" && t.Resource.Resource == "secrets"
}

// isSecretValuePath reports whether a path of a Secret holds a value that
// is redacted: data and stringData (and everything below), and the
// last-applied annotation. It is diff.Options.Redact for Secrets.
func isSecretValuePath(path []string) bool {
	switch len(path) {
	case 1:
		return path[0] == "data" || path[0] == "stringData"
	case 3:
		return path[0] == "metadata" && path[1] == "annotations" && path[2] == corev1.LastAppliedConfigAnnotation
	}
	return false
}

// shownJSON is obj's JSON as a record shows it: with its values redacted
// when it is a Secret whose data is not to be shown (secret).
func shownJSON(obj *rawobj.Object, secret bool) ([]byte, error) {
	if !secret {
		return obj.JSON, nil
	}
	return redactSecretJSON(obj.JSON)
}

// redactSecretJSON returns a Secret's JSON with its values redacted.
func redactSecretJSON(raw []byte) ([]byte, error) {
	var obj map[string]any
	if err := decodeExact(raw, &obj); err != nil {
		return nil, fmt.Errorf("unable to redact a Secret: %w", err)
	}
	redactSecretMap(obj)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, fmt.Errorf("unable to redact a Secret: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// redactSecretMap redacts a decoded Secret in place.
func redactSecretMap(obj map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			for k := range m {
				m[k] = redactedValue
			}
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			if _, ok := ann[corev1.LastAppliedConfigAnnotation]; ok {
				ann[corev1.LastAppliedConfigAnnotation] = redactedValue
			}
		}
	}
}
