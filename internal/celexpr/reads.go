package celexpr

import (
	celast "github.com/google/cel-go/common/ast"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// reads is what an expression reads of one of the variables object and
// oldObject, for rawobj.DecodeFields: nothing (used false), some of its
// members (fields), or all of it (fields nil).
type reads struct {
	used   bool
	fields rawobj.Fields
}

// Reads is what an expression reads of its variables: its verdict on two
// sets of variables that agree on that is the same (it has no other
// input).
type Reads struct {
	// Object is what it reads of object, for rawobj.DecodeFields; nil
	// with ObjectWhole for all of it, nil alone for nothing.
	Object      rawobj.Fields
	ObjectWhole bool
	// OldObject: it reads oldObject.
	OldObject bool
	// Vars are the other variables it reads ("name", "namespace", …).
	Vars []string
}

// Reads returns what p reads of its variables.
func (p *Program) Reads() Reads {
	return Reads{Object: p.object.fields, ObjectWhole: p.object.used && p.object.fields == nil, OldObject: p.oldObject.used, Vars: p.vars}
}

// readsOfExpr finds what e reads of object and oldObject: a chain of
// field selections from one of them reads the member it leads to, whole;
// the variable used any other way (alone, indexed, an optional field)
// reads all of it. Decoding what is read alone gives the expression the
// same values, at a fraction of the cost of decoding the whole object.
func readsOfExpr(e celast.Expr) (object, oldObject reads, vars []string) {
	r := readsWalk{vars: map[string]*reads{"object": &object, "oldObject": &oldObject}, scalars: map[string]bool{}}
	r.walk(e)
	for _, name := range scalarVarNames() {
		if r.scalars[name] {
			vars = append(vars, name)
		}
	}
	return object, oldObject, vars
}

// scalarVarNames are the variables but object and oldObject, in Vars'
// order.
func scalarVarNames() []string {
	return []string{"deltaType", "kind", "apiVersion", "resource", "namespace", "name"}
}

// readsWalk walks an expression for readsOfExpr: what it reads of the
// objects, and which other variables it names (a comprehension's own
// variable of the same name counts too: more read, never less).
type readsWalk struct {
	vars    map[string]*reads
	scalars map[string]bool
}

func (r readsWalk) walk(e celast.Expr) {
	switch e.Kind() {
	case celast.IdentKind:
		if v := r.vars[e.AsIdent()]; v != nil {
			v.used, v.fields = true, nil
		}
		r.scalars[e.AsIdent()] = true
	case celast.SelectKind:
		var path []string
		root := e
		for root.Kind() == celast.SelectKind {
			s := root.AsSelect()
			path = append([]string{s.FieldName()}, path...)
			root = s.Operand()
		}
		var v *reads
		if root.Kind() == celast.IdentKind {
			v = r.vars[root.AsIdent()]
		}
		if v == nil {
			r.walk(root)
			return
		}
		v.add(path)
	case celast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			r.walk(c.Target())
		}
		for _, a := range c.Args() {
			r.walk(a)
		}
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			r.walk(el)
		}
	case celast.MapKind:
		for _, entry := range e.AsMap().Entries() {
			m := entry.AsMapEntry()
			r.walk(m.Key())
			r.walk(m.Value())
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			r.walk(f.AsStructField().Value())
		}
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		for _, part := range []celast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()} {
			r.walk(part)
		}
	}
}

// add has r read path whole, unless it reads all of the variable
// already.
func (r *reads) add(path []string) {
	if r.used && r.fields == nil {
		return
	}
	if !r.used {
		r.used, r.fields = true, rawobj.Fields{}
	}
	r.fields.Keep(path...)
}

// merge has r read what other reads too.
func (r *reads) merge(other reads) {
	switch {
	case !other.used || r.used && r.fields == nil:
		return
	case other.fields == nil:
		r.used, r.fields = true, nil
		return
	case !r.used:
		r.used, r.fields = true, rawobj.Fields{}
	}
	mergeFields(r.fields, other.fields)
}

// mergeFields adds to dst what src keeps.
func mergeFields(dst, src rawobj.Fields) {
	for name, sub := range src {
		cur, seen := dst[name]
		switch {
		case seen && cur == nil:
		case sub == nil:
			dst[name] = nil
		case !seen:
			cur = rawobj.Fields{}
			dst[name] = cur
			mergeFields(cur, sub)
		default:
			mergeFields(cur, sub)
		}
	}
}

// decodeRead decodes what r reads of raw (JSON; nil is null) into CEL's
// values: whole numbers are ints, others doubles; nil when it reads
// nothing.
func decodeRead(raw []byte, r reads) (any, error) {
	if raw == nil || !r.used {
		return nil, nil
	}
	return rawobj.DecodeValidFields(raw, r.fields, false)
}
