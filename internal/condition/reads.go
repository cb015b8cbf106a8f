package condition

import (
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// readsOf is what a JSONPath template reads of an object, for
// rawobj.DecodeValidFields: for each of its {…} expressions, the member
// its leading field names lead to, whole. Decoding that alone gives the
// template the same results as decoding the whole object, at a fraction
// of the cost (a ConfigMap's data, a Pod's spec and every managedFields
// entry are skipped). nil — everything — when one of them may read
// anything: a recursive descent, a range, an expression that starts with
// no field name.
func readsOf(p *jsonpath.Parser) rawobj.Fields {
	reads := rawobj.Fields{}
	for _, n := range p.Root.Nodes {
		list, ok := n.(*jsonpath.ListNode)
		if !ok {
			continue // text: reads nothing
		}
		var path []string
		for _, field := range list.Nodes {
			f, ok := field.(*jsonpath.FieldNode)
			if !ok || f.Value == "" {
				break
			}
			path = append(path, f.Value)
		}
		if len(path) == 0 {
			return nil
		}
		reads.Keep(path...)
	}
	return reads
}
