package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-deltas/kubectl-deltas/internal/celexpr"
	"github.com/kubectl-deltas/kubectl-deltas/internal/condition"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

// exitConditionFailed is the exit code of a --fail-when that held.
const exitConditionFailed = 2

// waiter evaluates --until, --until-any and --fail-when on the objects the
// stream knows (the informers' Stores) whenever the engine asks: the
// objects named (present or not), or every object of an unnamed target.
type waiter struct {
	until, untilAny, failWhen []*condition.Condition
	engine                    *informer.Engine
	errOut                    io.Writer
}

// active reports whether any condition was given.
func (w *waiter) active() bool {
	return len(w.until)+len(w.untilAny)+len(w.failWhen) > 0
}

// watched is one object a condition is evaluated on.
type watched struct {
	// name is how messages name it: "deployment.apps/web".
	name string
	// vars is the object as the Store has it (Object nil if it does not
	// exist), for the conditions.
	vars celexpr.Vars
}

// objects returns what the conditions are evaluated on.
func (w *waiter) objects() []watched {
	var out []watched
	for _, inf := range w.engine.Informers() {
		t := inf.Target()
		if t.Name != "" {
			key := t.Name
			if t.Namespace != "" {
				key = t.Namespace + "/" + t.Name
			}
			o := watched{name: objectName(t, t.Name), vars: targetVars(t, t.Namespace, t.Name)}
			if obj, ok, _ := inf.Store().GetByKey(key); ok {
				o.vars.Object = obj.(*rawobj.Object).JSON
			}
			out = append(out, o)
			continue
		}
		for _, obj := range inf.Store().List() {
			o := obj.(*rawobj.Object)
			vars := targetVars(t, o.Namespace, o.Name)
			vars.Object = o.JSON
			out = append(out, watched{name: objectName(t, o.Name), vars: vars})
		}
	}
	return out
}

// targetVars are the CEL variables of an object of t.
func targetVars(t informer.Target, namespace, name string) celexpr.Vars {
	return celexpr.Vars{
		Kind: t.Kind.Kind, APIVersion: t.Kind.GroupVersion().String(), Resource: t.Resource.Resource,
		Namespace: namespace, Name: name,
	}
}

// objectName is "deployment.apps/web", as -o name prints it.
func objectName(t informer.Target, name string) string {
	kind := strings.ToLower(t.Kind.Kind)
	if t.Kind.Group != "" {
		kind += "." + t.Kind.Group
	}
	return kind + "/" + name
}

// check is the engine's Check: a --fail-when that holds for any object
// ends the run with exit 2; else --until-any holding for one object, or
// every --until holding for every object (at least one, unless every
// --until is delete), ends it with exit 0.
func (w *waiter) check() (bool, error) {
	objects := w.objects()
	for _, c := range w.failWhen {
		for _, o := range objects {
			if ok, err := c.Holds(o.vars); err != nil || ok {
				if err != nil {
					return true, err
				}
				return true, &ExitError{Code: exitConditionFailed, Err: fmt.Errorf("%s matched --fail-when=%s", o.name, c)}
			}
		}
	}
	for _, c := range w.untilAny {
		for _, o := range objects {
			ok, err := c.Holds(o.vars)
			if err != nil {
				return true, err
			}
			if ok {
				fmt.Fprintf(w.errOut, "%s condition met\n", o.name)
				return true, nil
			}
		}
	}
	if len(w.until) == 0 {
		return false, nil
	}
	if len(objects) == 0 && !w.allDelete() {
		return false, nil
	}
	for _, o := range objects {
		for _, c := range w.until {
			ok, err := c.Holds(o.vars)
			if err != nil {
				return true, err
			}
			if !ok {
				return false, nil
			}
		}
	}
	for _, o := range objects {
		fmt.Fprintf(w.errOut, "%s condition met\n", o.name)
	}
	return true, nil
}

// allDelete reports whether every --until is delete: then no object at all
// is what is waited for.
func (w *waiter) allDelete() bool {
	for _, c := range w.until {
		if !c.IsDelete() {
			return false
		}
	}
	return true
}

// timedOut is the error of a --timeout that elapsed while waiting, in
// kubectl wait's words, naming what did not meet the conditions.
func (w *waiter) timedOut() error {
	var pending []string
	for _, inf := range w.engine.Informers() {
		t := inf.Target()
		if t.Name != "" {
			pending = append(pending, t.Resource.Resource+"/"+t.Name)
		} else {
			pending = append(pending, t.Resource.GroupResource().String())
		}
	}
	return fmt.Errorf("timed out waiting for the condition on %s", strings.Join(pending, ", "))
}

// parseConditions reads the values of one condition flag.
func parseConditions(flag string, values []string) ([]*condition.Condition, error) {
	out := make([]*condition.Condition, 0, len(values))
	for _, v := range values {
		c, err := condition.Parse(flag, v)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
