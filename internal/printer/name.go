package printer

import "io"

// namePrinter writes kubectl's -o name form, the lower-case kind with its
// group for non-core kinds, a slash and the name: "configmap/demo",
// "deployment.apps/web". As in kubectl, the namespace is not part of it.
type namePrinter struct {
	buf []byte
}

func (p *namePrinter) Print(w io.Writer, r *Record) error {
	b := appendTypeName(p.buf[:0], r)
	b = append(b, '/')
	b = appendSafe(b, r.Name)
	b = append(b, '\n')
	p.buf = b
	_, err := w.Write(b)
	return err
}
