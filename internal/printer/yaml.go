package printer

import (
	"fmt"
	"io"

	"go.yaml.in/yaml/v2"
)

// yamlPrinter writes each record as one YAML document, with "---" between
// documents (not before the first), as kubectl's YAML printer does.
//
// Keys keep their JSON order: the record's documented order (type first),
// and the object's as the API server sent it, where
// sigs.k8s.io/yaml.JSONToYAML would sort them. The encoder is the one
// sigs.k8s.io/yaml uses, so scalars are quoted and indented the same way.
type yamlPrinter struct {
	printed bool
	json    []byte
	buf     []byte
}

func (p *yamlPrinter) Print(w io.Writer, r *Record) error {
	p.json = AppendJSON(p.json[:0], r)
	// JSON is YAML; decoding into a MapSlice keeps the key order (nested
	// objects decode as MapSlices too).
	var doc yaml.MapSlice
	if err := yaml.Unmarshal(p.json, &doc); err != nil {
		return fmt.Errorf("cannot convert the %s record of %s to YAML: %w", r.Type, r.Name, err)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("cannot convert the %s record of %s to YAML: %w", r.Type, r.Name, err)
	}
	b := p.buf[:0]
	if p.printed {
		b = append(b, "---\n"...)
	}
	b = append(b, out...)
	p.buf = b
	if _, err := w.Write(b); err != nil {
		return err
	}
	p.printed = true
	return nil
}
