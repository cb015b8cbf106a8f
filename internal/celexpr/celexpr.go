// Package celexpr compiles and evaluates the CEL expressions of --where and
// of cel= conditions in the environment a Kubernetes API server gives a new
// ValidatingAdmissionPolicy expression: k8s.io/apiserver's base environment
// (cel-go's optional types and ext libraries as Kubernetes enables them,
// Kubernetes' own library: regex, lists, URLs, quantity, IP/CIDR, format,
// semver) with its cost limits. An expression sees the delta's object and
// the previous state (object, oldObject: maps as decoded from JSON, null
// when absent) and the record's fields (deltaType — "type" is CEL's own
// type() — kind, apiVersion, resource, namespace, name), and must yield a
// bool.
package celexpr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
)

const (
	// CostLimit bounds the cost of one evaluation: Kubernetes' limit per
	// validation call (PerCallLimit, about 0.1 s of work). The base
	// environment's programs carry it; an evaluation that reaches it stops
	// with an error.
	CostLimit = celconfig.PerCallLimit
	// EstimatedCostLimit bounds the cost an expression may be estimated to
	// have before it runs: Kubernetes' limit for one CRD validation rule
	// (apiextensions' StaticEstimatedCostLimit), which is also its runtime
	// budget for a whole policy.
	EstimatedCostLimit = celconfig.RuntimeCELCostBudget
	// TimeLimit bounds the time of one evaluation, whatever its cost, as
	// the request's deadline bounds it in the API server: cel-go's cost
	// tracking grows quadratically with a comprehension's iterations, so a
	// comprehension over hundreds of thousands of items would take minutes
	// to reach CostLimit. The interpreter looks at the clock every
	// celconfig.CheckFrequency iterations.
	TimeLimit = time.Second
	// AssumedSize is what the estimate takes for the size of a string, list
	// or map it cannot size from the expression itself: everything read
	// from object and oldObject, which carry no schema here, and what
	// functions make of it. Ten times AssumedSize items in a comprehension
	// cost far less than EstimatedCostLimit; a comprehension nested in
	// another over the object's data costs more.
	AssumedSize = 1000
)

// Vars are what an expression is evaluated on.
type Vars struct {
	// Object and OldObject are JSON; nil is null (no such object).
	Object, OldObject                                 []byte
	Type, Kind, APIVersion, Resource, Namespace, Name string
}

// Program is a compiled expression. It is safe for concurrent use.
type Program struct {
	// flag and src name the expression in errors.
	flag, src string
	prg       cel.Program
	// object and oldObject are what it reads of them: only that is
	// decoded; vars the other variables it reads.
	object, oldObject reads
	vars              []string
	// timeLimit is TimeLimit; tests shorten it.
	timeLimit time.Duration
}

// String returns the expression as given.
func (p *Program) String() string { return p.src }

// newEnv is Kubernetes' environment for new expressions at this build's
// compatibility version, with the variables of every expression.
func newEnv() (*cel.Env, error) {
	fields := scalarVarNames()
	opts := make([]cel.EnvOption, 0, 2+len(fields))
	opts = append(opts,
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
	)
	for _, name := range fields {
		opts = append(opts, cel.Variable(name, cel.StringType))
	}
	set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(
		environment.VersionedOptions{IntroducedVersion: version.MajorMinor(1, 0), EnvOptions: opts},
	)
	if err != nil {
		return nil, err
	}
	return set.NewExpressionsEnv(), nil
}

// Compile checks expr: it must compile, yield a bool, and have an
// estimated cost within EstimatedCostLimit. flag names the flag in errors
// ("--where"), which point at the expression's line and column.
func Compile(flag, expr string) (*Program, error) {
	env, err := newEnv()
	if err != nil {
		return nil, fmt.Errorf("setting up CEL: %w", err)
	}
	ast, issues := env.CompileSource(common.NewStringSource(expr, flag))
	if issues != nil && issues.Err() != nil {
		return nil, compileError(issues.Err().Error())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		hint := fmt.Sprintf("compare it, e.g. %s == …", expr)
		if t.Kind() == types.OpaqueKind && t.TypeName() == "optional_type" {
			hint = "test it with .hasValue(), or compare .orValue(DEFAULT)"
		}
		return nil, fmt.Errorf("%s:1:1: the expression yields %s, not bool (%s)\n | %s\n | ^", flag, t, hint, expr)
	}
	estimate, err := env.EstimateCost(ast, &library.CostEstimator{SizeEstimator: sizeModel{}})
	if err != nil {
		return nil, fmt.Errorf("%s: estimating the cost of %q: %w", flag, expr, err)
	}
	if estimate.Max > EstimatedCostLimit {
		return nil, fmt.Errorf("%s:1:1: estimated cost %s exceeds the limit of %d (Kubernetes' limit for one "+
			"validation rule, with every list, map and string of the object taken to hold up to %d items): "+
			"comprehensions nested over the object's data multiply; iterate once, or over a literal list\n | %s",
			flag, costString(estimate.Max), EstimatedCostLimit, AssumedSize, expr)
	}
	prg, err := env.Program(ast, cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return nil, fmt.Errorf("%s: %q: %w", flag, expr, err)
	}
	object, oldObject, vars := readsOfExpr(ast.NativeRep().Expr())
	return &Program{flag: flag, src: expr, prg: prg, object: object, oldObject: oldObject, vars: vars, timeLimit: TimeLimit}, nil
}

// Unquote returns the expression of cel='EXPR' (or "EXPR"): without the
// quotes a shell would have left around it.
func Unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// compileError turns cel-go's report ("ERROR: --where:1:9: message" and a
// caret under the column, per issue) into ours: the same lines without the
// prefix and the empty container, and a hint where CEL's grammar surprises.
func compileError(report string) error {
	report = strings.ReplaceAll(report, "ERROR: ", "")
	report = strings.ReplaceAll(report, " (in container '')", "")
	if strings.Contains(report, "reserved identifier: namespace") {
		report += "\nnamespace is a reserved word in CEL: write object.metadata.namespace"
	}
	return errors.New(report)
}

// costString prints an estimate; the estimator saturates at the largest
// uint64 when a size is unbounded.
func costString(c uint64) string {
	if c >= 1<<63 {
		return "unbounded"
	}
	return fmt.Sprint(c)
}

// sizeModel sizes, for the cost estimate, every value whose size the
// checker cannot compute from the expression — strings, lists, maps, and
// dyn, optional and library values that may hold them — as AssumedSize.
// Scalars keep the checker's size of one.
type sizeModel struct{}

// EstimateSize implements checker.CostEstimator.
func (sizeModel) EstimateSize(node checker.AstNode) *checker.SizeEstimate {
	switch node.Type().Kind() {
	case types.BoolKind, types.IntKind, types.UintKind, types.DoubleKind, types.NullTypeKind,
		types.TimestampKind, types.DurationKind:
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: AssumedSize}
}

// EstimateCallCost implements checker.CostEstimator: no function of ours.
func (sizeModel) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// Eval evaluates the expression on v. An expression that cannot be
// evaluated on this object (a field it reads is absent: "no such key") is
// false, as a filter would have it.
func (p *Program) Eval(v Vars) (bool, error) {
	return All([]*Program{p}, v)
}

// All reports whether every program is true on v, decoding of v's
// objects, once for all of them, what they read; it stops at the first
// false.
func All(programs []*Program, v Vars) (bool, error) {
	var objectReads, oldReads reads
	if len(programs) == 1 {
		objectReads, oldReads = programs[0].object, programs[0].oldObject
	} else {
		for _, p := range programs {
			objectReads.merge(p.object)
			oldReads.merge(p.oldObject)
		}
	}
	object, err := decodeRead(v.Object, objectReads)
	if err != nil {
		return false, fmt.Errorf("unable to decode an object for CEL: %w", err)
	}
	old, err := decodeRead(v.OldObject, oldReads)
	if err != nil {
		return false, fmt.Errorf("unable to decode an object for CEL: %w", err)
	}
	activation := &activation{object: object, oldObject: old, vars: &v}
	for _, p := range programs {
		ok, err := p.eval(activation, v)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// eval runs p on decoded variables. Absent fields and operands of the
// wrong type make the expression false; any other failure — the cost
// limit reached above all — is an error naming the flag and the object.
func (p *Program) eval(activation interpreter.Activation, v Vars) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeLimit)
	defer cancel()
	out, _, err := p.prg.ContextEval(ctx, activation)
	if err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "no such key") || strings.Contains(msg, "no such overload"):
			return false, nil
		case strings.Contains(msg, "cost limit exceeded"):
			msg = fmt.Sprintf("%s (the limit is %d per evaluation, Kubernetes' per-call limit)", msg, CostLimit)
		case ctx.Err() != nil:
			msg = fmt.Sprintf("%s: it ran longer than %s", msg, p.timeLimit)
		}
		return false, fmt.Errorf("%s: evaluating %q on %s: %s", p.flag, p.src, objectName(v), msg)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("%s: %q yields %v on %s, not a bool", p.flag, p.src, out.Value(), objectName(v))
	}
	return b, nil
}

// activation is what an expression's variables resolve to: the decoded
// objects and v's fields (a struct, not a map built for each evaluation).
type activation struct {
	object, oldObject any
	vars              *Vars
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "object":
		return a.object, true
	case "oldObject":
		return a.oldObject, true
	}
	if value, ok := a.vars.Scalar(name); ok {
		return value, true
	}
	return nil, false
}

// Scalar is the value of the variable name but object and oldObject
// (scalarVarNames), and whether there is such a variable.
func (v *Vars) Scalar(name string) (string, bool) {
	switch name {
	case "deltaType":
		return v.Type, true
	case "kind":
		return v.Kind, true
	case "apiVersion":
		return v.APIVersion, true
	case "resource":
		return v.Resource, true
	case "namespace":
		return v.Namespace, true
	case "name":
		return v.Name, true
	}
	return "", false
}

func (*activation) Parent() interpreter.Activation { return nil }

// objectName names the object of v for errors: kind namespace/name.
func objectName(v Vars) string {
	name := v.Name
	if v.Namespace != "" {
		name = v.Namespace + "/" + name
	}
	if v.Kind == "" {
		return name
	}
	return strings.ToLower(v.Kind) + " " + name
}
