// Package condition parses and evaluates the conditions of --until,
// --until-any and --fail-when, in the grammar of kubectl wait --for:
//
//	delete                      the object does not exist
//	create                      the object exists
//	condition=NAME              status.conditions has NAME with status True
//	condition=NAME=VALUE        … with status VALUE (case-insensitive)
//	jsonpath='{PATH}'=VALUE     PATH yields exactly VALUE
//	jsonpath='{PATH}'           PATH yields something
//	cel='EXPR'                  a CEL expression (internal/celexpr) is true
//	status=STATUS               the object's health (internal/health) is STATUS
//
// A condition is evaluated on an object as the Store holds it, or on nil
// for an object that does not exist.
package condition

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/health"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// kind is the form of a condition.
type kind int

const (
	kindDelete kind = iota
	kindCreate
	kindCondition
	kindJSONPath
	kindCEL
	kindStatus
)

// Condition is one parsed condition. It is safe for concurrent use.
type Condition struct {
	// src is the condition as given, for messages.
	src  string
	kind kind
	// name and value are condition=NAME=VALUE's.
	name, value string
	// path is the JSONPath template of jsonpath=; value its expected
	// value when hasValue. jsonPath is it parsed, which evaluation
	// changes: lock guards it, and memo.
	path     string
	hasValue bool
	lock     sync.Mutex
	jsonPath *jsonpath.JSONPath
	// reads is what condition= and jsonpath= read of an object, nil for
	// all of it: only that is decoded (rawobj.DecodeValidFields).
	reads rawobj.Fields
	// memo keeps the verdicts of condition=, jsonpath= and cel= by what
	// they read (memoKey), when that is not all of the object: the many
	// objects of a type in the same state are judged once, as
	// health.Judge keeps the verdicts on Pods. Guarded by lock; emptied
	// when it reaches maxMemo.
	memo *memo
	// cel is cel='EXPR''s program.
	cel *celexpr.Program
	// status is status=STATUS's status, judge its judge.
	status health.Status
	judge  *health.Judge
}

// String returns the condition as given.
func (c *Condition) String() string { return c.src }

// Parse reads one condition; flag names the flag in errors ("--until").
func Parse(flag, s string) (*Condition, error) {
	c := &Condition{src: s}
	form, arg, hasArg := strings.Cut(s, "=")
	switch strings.ToLower(form) {
	case "delete", "create":
		if hasArg {
			return nil, fmt.Errorf("invalid %s %q: %s takes no value", flag, s, form)
		}
		c.kind = kindCreate
		if strings.EqualFold(form, "delete") {
			c.kind = kindDelete
		}
	case "condition":
		c.kind = kindCondition
		c.reads = rawobj.Fields{"status": {"conditions": nil}}
		c.memo = newMemo(c.reads, nil)
		c.name, c.value, _ = strings.Cut(arg, "=")
		if c.name == "" {
			return nil, fmt.Errorf("invalid %s %q: name the condition, e.g. %s=condition=Available", flag, s, flag)
		}
		if c.value == "" {
			c.value = "True"
		}
	case "jsonpath":
		c.kind = kindJSONPath
		if err := c.parseJSONPath(arg); err != nil {
			return nil, fmt.Errorf("invalid %s %q: %w", flag, s, err)
		}
		if c.reads != nil {
			c.memo = newMemo(c.reads, nil)
		}
	case "cel":
		c.kind = kindCEL
		prg, err := celexpr.Compile(flag, celexpr.Unquote(arg))
		if err != nil {
			return nil, err
		}
		c.cel = prg
		if r := prg.Reads(); !r.ObjectWhole && !r.OldObject {
			c.memo = newMemo(r.Object, r.Vars)
		}
	case "status":
		st, err := health.ParseStatus(arg)
		if err != nil {
			return nil, fmt.Errorf("invalid %s %q: %w", flag, s, err)
		}
		c.kind, c.status, c.judge = kindStatus, st, health.NewJudge()
	default:
		return nil, fmt.Errorf("invalid %s %q: must be delete, create, condition=NAME[=VALUE], jsonpath='{PATH}'[=VALUE], cel='EXPR' or status=STATUS", flag, s)
	}
	return c, nil
}

// parseJSONPath reads '{PATH}'[=VALUE] (quotes optional), as kubectl wait.
func (c *Condition) parseJSONPath(arg string) error {
	arg = strings.TrimSpace(arg)
	end := strings.LastIndex(arg, "}")
	if !strings.HasPrefix(strings.Trim(arg, `'"`), "{") || end < 0 {
		return errors.New(`the JSONPath must be in braces, e.g. jsonpath='{.status.phase}'=Running`)
	}
	path := strings.Trim(arg[:end+1], `'"`)
	rest := strings.TrimLeft(arg[end+1:], `'"`)
	if rest != "" {
		if !strings.HasPrefix(rest, "=") {
			return fmt.Errorf("unexpected %q after the JSONPath", rest)
		}
		c.value, c.hasValue = strings.Trim(rest[1:], `'"`), true
	}
	j, err := newJSONPath(path)
	if err != nil {
		return err
	}
	parsed, err := jsonpath.Parse("condition", path)
	if err != nil {
		return err
	}
	c.path, c.jsonPath, c.reads = path, j, readsOf(parsed)
	return nil
}

// newJSONPath parses a JSONPath template; missing keys yield nothing.
func newJSONPath(path string) (*jsonpath.JSONPath, error) {
	j := jsonpath.New("condition").AllowMissingKeys(true)
	if err := j.Parse(path); err != nil {
		return nil, err
	}
	return j, nil
}

// memo is a condition's kept verdicts, by the hash of what it reads of an
// object (its selection of the object's JSON, when hashObject) and of
// the other variables it reads (vars, celexpr.Vars' names).
type memo struct {
	hashObject bool
	selection  *rawobj.Selection
	vars       []string
	seed       maphash.Seed
	verdicts   map[uint64]bool
}

// maxMemo bounds a memo.
const maxMemo = 4096

// newMemo is the memo of a condition that reads fields of the object
// (nil: nothing of it) and the variables vars.
func newMemo(fields rawobj.Fields, vars []string) *memo {
	m := &memo{hashObject: fields != nil, vars: vars, seed: maphash.MakeSeed(), verdicts: map[uint64]bool{}}
	if fields != nil {
		m.selection = rawobj.Select(fields)
	}
	return m
}

// key is what obj, whose variables are v, is kept by.
func (m *memo) key(obj *rawobj.Object, v celexpr.Vars) (uint64, error) {
	var h maphash.Hash
	h.SetSeed(m.seed)
	if m.hashObject {
		if err := obj.HashMember(&h, obj.JSON, m.selection); err != nil {
			return 0, err
		}
	}
	for _, name := range m.vars {
		h.WriteByte(0)
		value, _ := v.Scalar(name)
		h.WriteString(value)
	}
	return h.Sum64(), nil
}

// IsDelete reports whether the condition is delete (or status=NotFound):
// it holds for objects that do not exist.
func (c *Condition) IsDelete() bool {
	return c.kind == kindDelete || c.kind == kindStatus && c.status == health.NotFound
}

// IsStatus reports whether the condition is on health (status=STATUS):
// under --tree it is a verdict on the root and everything it owns.
func (c *Condition) IsStatus() bool { return c.kind == kindStatus }

// noteEvent tells c's judge, if it has one, of an Event
// (health.Judge.NoteEvent).
func (c *Condition) noteEvent(uid, reason string, last time.Time) {
	if c.judge != nil {
		c.judge.NoteEvent(uid, reason, last)
	}
}

// setFailAfter sets how long a transient failure lasts before a status=
// condition's judge counts it as Failed.
func (c *Condition) setFailAfter(d time.Duration) {
	if c.judge != nil {
		c.judge.SetFailAfter(d)
	}
}

// Judge evaluates the condition at now on obj (nil: it does not exist),
// whose CEL variables are v. recheckAt, when not zero, is when the verdict
// on this same object may change: a health that depends on time.
func (c *Condition) Judge(obj *rawobj.Object, v celexpr.Vars, now time.Time) (ok bool, recheckAt time.Time, err error) {
	if c.kind != kindStatus {
		ok, err = c.holdsKept(obj, v)
		return ok, time.Time{}, err
	}
	h := c.judge.At(obj, now)
	return h.Status == c.status, h.RecheckAt, nil
}

// holdsKept is Holds, through the memo when the condition has one and
// the object exists. Errors are not kept.
func (c *Condition) holdsKept(obj *rawobj.Object, v celexpr.Vars) (bool, error) {
	if c.memo == nil || obj == nil {
		return c.Holds(v)
	}
	key, keyErr := c.memo.key(obj, v)
	if keyErr == nil {
		c.lock.Lock()
		ok, found := c.memo.verdicts[key]
		c.lock.Unlock()
		if found {
			return ok, nil
		}
	}
	ok, err := c.Holds(v)
	if err == nil && keyErr == nil {
		c.lock.Lock()
		if len(c.memo.verdicts) >= maxMemo {
			clear(c.memo.verdicts)
		}
		c.memo.verdicts[key] = ok
		c.lock.Unlock()
	}
	return ok, err
}

// Holds reports whether the condition holds for v.Object (JSON; nil means
// the object does not exist). A CEL condition also sees v's other fields.
func (c *Condition) Holds(v celexpr.Vars) (bool, error) {
	obj := v.Object
	switch c.kind {
	case kindDelete:
		return obj == nil, nil
	case kindCreate:
		return obj != nil, nil
	}
	if obj == nil {
		return c.kind == kindStatus && c.status == health.NotFound, nil
	}
	if c.kind == kindCEL {
		return c.cel.Eval(v)
	}
	if c.kind == kindStatus {
		o, err := rawobj.Parse(obj, rawobj.ParseOptions{AllowMissingName: true})
		if err != nil {
			return false, fmt.Errorf("unable to read an object to evaluate %q: %w", c.src, err)
		}
		return c.judge.Of(o).Status == c.status, nil
	}
	decoded, err := rawobj.DecodeValidFields(obj, c.reads, true)
	if err != nil {
		return false, fmt.Errorf("unable to decode an object to evaluate %q: %w", c.src, err)
	}
	if c.kind == kindCondition {
		return c.conditionHolds(decoded), nil
	}
	return c.jsonPathHolds(decoded)
}

// conditionHolds looks up status.conditions[type=name].status.
func (c *Condition) conditionHolds(v any) bool {
	obj, _ := v.(map[string]any)
	status, _ := obj["status"].(map[string]any)
	conditions, _ := status["conditions"].([]any)
	for _, cond := range conditions {
		m, _ := cond.(map[string]any)
		t, _ := m["type"].(string)
		if !strings.EqualFold(t, c.name) {
			continue
		}
		s, _ := m["status"].(string)
		return strings.EqualFold(s, c.value)
	}
	return false
}

// jsonPathHolds evaluates the JSONPath: with a value, it must yield that
// one value; without, anything.
func (c *Condition) jsonPathHolds(v any) (bool, error) {
	c.lock.Lock()
	results, err := c.jsonPath.FindResults(v)
	c.lock.Unlock()
	if err != nil {
		return false, nil
	}
	var found []string
	for _, set := range results {
		for _, r := range set {
			if !r.IsValid() {
				continue
			}
			found = append(found, format(r.Interface()))
		}
	}
	if !c.hasValue {
		return len(found) > 0, nil
	}
	return len(found) == 1 && found[0] == c.value, nil
}

// format prints a JSONPath result as kubectl wait compares it.
func format(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return "null"
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
	return fmt.Sprint(v)
}
