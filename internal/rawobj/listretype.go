package rawobj

// A list whose apiVersion or kind comes after its items (servers send them
// first; custom resource lists may not): the items were typed with what
// the list had then, and are typed again once the list ends.

import (
	"errors"
	"fmt"
)

// Bits of the entries of listParser.had.
const (
	hadAPIVersion = 1 << iota
	hadKind
	hadBits = iota // the item's index is shifted by hadBits
)

// handedOutKeepTypes reports whether retype would leave every item handed
// out to each as it is: whether each had its own apiVersion where the
// list's apiVersion differs from itemsAPIVersion, and its own kind where
// the items' kind differs.
func (lp *listParser) handedOutKeepTypes(itemsAPIVersion, itemsListKind string, l *List) bool {
	old := newTypeMeta(itemsAPIVersion, itemKind(itemsListKind))
	tm := newTypeMeta(l.APIVersion, itemKind(l.Kind))
	kept := 0
	for _, had := range lp.had {
		if keepsType(had, &old, &tm) {
			kept++
		}
	}
	return kept == lp.handedOut
}

// keepsType reports whether an item typed with old stays as it is when
// retyped with tm, had telling (as an entry of listParser.had, or 0) which
// of apiVersion and kind it had of its own: its own members are kept, and
// the inserted ones only change where old and tm differ.
func keepsType(had uint64, old, tm *typeMeta) bool {
	return (had&hadAPIVersion != 0 || old.apiVersion == tm.apiVersion) && (had&hadKind != 0 || old.kind == tm.kind)
}

// retype gives the items of l the apiVersion and kind that l has now, as
// ParseList would have if they had come before the items: the items were
// parsed with the list's apiVersion and kind itemsAPIVersion and
// itemsListKind, and lp.had tells which items had their own.
func (lp *listParser) retype(l *List, itemsAPIVersion, itemsListKind string) error {
	old := newTypeMeta(itemsAPIVersion, itemKind(itemsListKind))
	tm := newTypeMeta(l.APIVersion, itemKind(l.Kind))
	had := lp.had
	for i, o := range l.Items {
		var flags uint64
		if len(had) > 0 && had[0]>>hadBits == uint64(i) {
			flags, had = had[0], had[1:]
		}
		if keepsType(flags, &old, &tm) {
			continue // the same members are inserted
		}
		n, err := retypeItem(o, flags&hadAPIVersion != 0, flags&hadKind != 0, &old, &tm, lp.opts.KeepManagedFields)
		if err != nil {
			return fmt.Errorf("items[%d]: %w", i, err)
		}
		l.Items[i] = n
	}
	return nil
}

// retypeItem returns item o, built with old, as if it had been built with
// tm from the same input. o.JSON is the input object (minus the
// managedFields when !keepManagedFields) with old's members inserted after
// its '{' where it lacked its own (hasAPIVersion, hasKind); they kept their
// trailing comma, as the item's metadata member follows. So o.JSON without
// them is parsed again with tm. The managedFields summary that was taken
// from members no longer in o.JSON is carried over into the new
// allocation.
func retypeItem(o *Object, hasAPIVersion, hasKind bool, old, tm *typeMeta, keepManagedFields bool) (*Object, error) {
	inserted := 0
	if !hasAPIVersion {
		inserted += len(old.apiVersionJSON)
	}
	if !hasKind {
		inserted += len(old.kindJSON)
	}
	if 1+inserted > len(o.JSON) {
		return nil, errors.New("internal error: the item lacks the members inserted into it")
	}
	rest := o.JSON[1+inserted:]
	data := make([]byte, 1, 1+len(rest))
	data[0] = '{'
	data = append(data, rest...)
	p := objScan{
		scanner:           scanner{data: data},
		keepManagedFields: keepManagedFields,
		allowMissingName:  true, // the item parsed with the caller's options
		depth:             1,
	}
	if err := p.parseObject(); err != nil {
		return nil, fmt.Errorf("internal error: the item does not parse again: %w", err)
	}
	if !keepManagedFields {
		p.carry, p.carried = true, o.managers
	}
	return p.build(tm), nil
}
