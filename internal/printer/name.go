package printer

import (
	"io"

	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// namePrinter writes kubectl's -o name form, the lower-case kind with its
// group for non-core kinds, a slash and the name: "configmap/demo",
// "deployment.apps/web". As in kubectl, the namespace is not part of it.
//
// With several clusters the context comes first, as a column:
// "prod     configmap/demo".
type namePrinter struct {
	buf          []byte
	contextWidth int
}

func (p *namePrinter) Print(w io.Writer, r *Record) error {
	b := appendContext(p.buf[:0], r, p.contextWidth)
	b = appendTypeName(b, r)
	b = append(b, '/')
	b = textsafe.Append(b, r.Name)
	b = append(b, '\n')
	p.buf = b
	_, err := w.Write(b)
	return err
}
