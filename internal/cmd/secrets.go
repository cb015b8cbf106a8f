package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
)

// redactedValue replaces every redacted Secret value.
const redactedValue = "<redacted>"

// lastAppliedAnnotation holds the whole applied object, Secret data
// included.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// isSecret reports whether m is core/v1 Secrets.
func isSecret(m *meta.RESTMapping) bool {
	return m.Resource.Group == "" && m.Resource.Resource == "secrets"
}

// redactSecretJSON replaces the values of data and stringData and the
// last-applied-configuration annotation of a Secret's JSON. Keys stay, so
// readers see which entries exist.
func redactSecretJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
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
			if _, ok := ann[lastAppliedAnnotation]; ok {
				ann[lastAppliedAnnotation] = redactedValue
			}
		}
	}
}
