// Package celexpr compiles and evaluates the CEL expressions of --where and
// of cel= conditions, with github.com/google/cel-go, the CEL library
// Kubernetes itself uses. An expression sees the delta's object and the
// previous state (object, oldObject: maps as decoded from JSON, null when
// absent) and the record's fields (deltaType — "type" is CEL's own type()
// — kind, apiVersion, resource, namespace, name), and must yield a bool.
package celexpr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// Vars are what an expression is evaluated on.
type Vars struct {
	// Object and OldObject are JSON; nil is null (no such object).
	Object, OldObject                                 []byte
	Type, Kind, APIVersion, Resource, Namespace, Name string
}

// Program is a compiled expression. It is safe for concurrent use.
type Program struct {
	src string
	prg cel.Program
}

// String returns the expression as given.
func (p *Program) String() string { return p.src }

// newEnv declares the variables of every expression.
func newEnv() (*cel.Env, error) {
	fields := []string{"deltaType", "kind", "apiVersion", "resource", "namespace", "name"}
	opts := make([]cel.EnvOption, 0, 3+len(fields))
	opts = append(opts,
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		ext.Strings(),
	)
	for _, name := range fields {
		opts = append(opts, cel.Variable(name, cel.StringType))
	}
	return cel.NewEnv(opts...)
}

// Compile checks expr; flag names the flag in errors ("--where").
func Compile(flag, expr string) (*Program, error) {
	env, err := newEnv()
	if err != nil {
		return nil, fmt.Errorf("setting up CEL: %w", err)
	}
	ast, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("invalid %s CEL expression %q: %s", flag, expr, oneLine(issues.Err().Error()))
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("invalid %s CEL expression %q: it yields %s, not a bool", flag, expr, t)
	}
	prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, fmt.Errorf("invalid %s CEL expression %q: %w", flag, expr, err)
	}
	return &Program{src: expr, prg: prg}, nil
}

// Eval evaluates the expression on v. An expression that cannot be
// evaluated on this object (a field it reads is absent: "no such key") is
// false, as a filter would have it.
func (p *Program) Eval(v Vars) (bool, error) {
	return All([]*Program{p}, v)
}

// All reports whether every program is true on v, decoding v's objects
// once for all of them; it stops at the first false.
func All(programs []*Program, v Vars) (bool, error) {
	object, err := decode(v.Object)
	if err != nil {
		return false, err
	}
	old, err := decode(v.OldObject)
	if err != nil {
		return false, err
	}
	activation := map[string]any{
		"object": object, "oldObject": old,
		"deltaType": v.Type, "kind": v.Kind, "apiVersion": v.APIVersion,
		"resource": v.Resource, "namespace": v.Namespace, "name": v.Name,
	}
	for _, p := range programs {
		ok, err := p.eval(activation, v)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// eval runs p on decoded variables.
func (p *Program) eval(activation map[string]any, v Vars) (bool, error) {
	out, _, err := p.prg.Eval(activation)
	if err != nil {
		if strings.Contains(err.Error(), "no such key") || strings.Contains(err.Error(), "no such overload") {
			return false, nil
		}
		return false, fmt.Errorf("evaluating %q on %s %s: %w", p.src, v.Kind, v.Name, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("CEL expression %q yields %v, not a bool", p.src, out.Value())
	}
	return b, nil
}

// decode turns JSON into CEL values: whole numbers are ints, others
// doubles, as Kubernetes' CEL sees them; nil is null.
func decode(raw []byte) (any, error) {
	if raw == nil {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("unable to decode an object for CEL: %w", err)
	}
	return numbers(v), nil
}

// numbers replaces json.Numbers by int64 or float64, in place.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = numbers(c)
		}
	case []any:
		for i, c := range x {
			x[i] = numbers(c)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
	}
	return v
}

// oneLine joins a multi-line CEL error (it points at the column with a
// caret on its own line).
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
