package diff

// LastAppliedAnnotation is the annotation kubectl apply stores the applied
// object in; on a Secret it holds the Secret's values.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// RedactSecret is an Options.Redact function for Secret objects (core
// group, kind Secret): it redacts data, stringData and the
// last-applied-configuration annotation, whose values must never be shown
// (specification S7). Use it only for Secrets; other kinds need no Redact.
func RedactSecret(path []string) bool {
	switch len(path) {
	case 1:
		return path[0] == "data" || path[0] == "stringData"
	case 3:
		return path[0] == "metadata" && path[1] == "annotations" && path[2] == LastAppliedAnnotation
	}
	return false
}
