package rawobj

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OwnerReferences decodes the object's metadata.ownerReferences: nil when
// it has none (absent, null or empty). Only that member is decoded; the
// rest of the JSON is skipped by the scanner, so asking is cheap enough to
// do for every delta of an owner index.
func (o *Object) OwnerReferences() ([]metav1.OwnerReference, error) {
	raw, err := metadataMember(o.JSON, "ownerReferences")
	if err != nil || raw == nil {
		return nil, err
	}
	var refs []metav1.OwnerReference
	if err := json.Unmarshal(raw, &refs); err != nil {
		return nil, fmt.Errorf("metadata.ownerReferences of %s: %w", o.Name, err)
	}
	if len(refs) == 0 {
		return nil, nil
	}
	return refs, nil
}

// Controller is the object's owner reference marked controller (the API
// server allows one), nil when none is.
func (o *Object) Controller() (*metav1.OwnerReference, error) {
	refs, err := o.OwnerReferences()
	if err != nil {
		return nil, err
	}
	return ControllerOf(refs), nil
}

// OwnerUID is the UID of the object's controller, or of its first owner
// when none is the controller; "" without owners (or when they do not
// read). Most objects have none: their JSON is not decoded at all.
func (o *Object) OwnerUID() string {
	if o.facts&factNoOwners != 0 || !o.parsed() && !bytes.Contains(o.JSON, []byte("ownerReferences")) {
		return ""
	}
	if o.parsed() {
		uid, ok := "", false
		if o.ownersAt > 0 && o.facts&factPlainMetadata != 0 {
			uid, ok = o.ownerUIDAt()
		} else {
			uid, ok = validOwnerUID(o.JSON, o.facts&factPlainMetadata != 0)
		}
		if ok {
			return uid
		}
	}
	refs, err := o.OwnerReferences()
	if err != nil || len(refs) == 0 {
		return ""
	}
	if r := ControllerOf(refs); r != nil {
		return string(r.UID)
	}
	return string(refs[0].UID)
}

// ControllerOf is the reference of refs marked controller, nil when none
// is.
func ControllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// metadataMember returns the JSON value of metadata[name] in the object
// data, nil when there is none. Like encoding/json, the last of repeated
// members wins.
func metadataMember(data []byte, name string) ([]byte, error) {
	s := scanner{data: data}
	var scratch []byte
	var value []byte
	found := func(depth int, match func(m member) bool, inner func() error) error {
		empty, err := s.objectStart(depth)
		if err != nil || empty {
			return err
		}
		for {
			var m member
			if m, scratch, err = s.memberKey(scratch); err != nil {
				return err
			}
			if match(m) {
				err = inner()
			} else {
				err = s.skipValue(depth)
			}
			if err != nil {
				return err
			}
			if end, err := s.memberEnd(); err != nil || end {
				return err
			}
		}
	}
	err := found(1, func(m member) bool { return string(m.key) == "metadata" }, func() error {
		if s.peek() != '{' {
			return s.skipValue(1)
		}
		value = nil
		return found(2, func(m member) bool { return string(m.key) == name }, func() error {
			start := s.pos
			if err := s.skipValue(2); err != nil {
				return err
			}
			value = data[start:s.pos]
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if string(value) == "null" {
		return nil, nil
	}
	return value, nil
}

// Member returns the JSON value of the object's top-level member name
// ("spec", "status"), nil when there is none or it is null.
func (o *Object) Member(name string) ([]byte, error) {
	values, err := o.Members(name)
	if err != nil {
		return nil, err
	}
	return values[0], nil
}

// Members returns the JSON values of the object's top-level members names
// (distinct), in their order: nil for one there is none of, or that is
// null. They are cut out in one pass; the rest of the JSON is skipped by
// the scanner. Like encoding/json, the last of repeated members wins.
func (o *Object) Members(names ...string) ([][]byte, error) {
	if len(names) == 1 && names[0] == "status" && (o.WithoutStatus() || o.statusAt > 0) {
		// The parse knows where status is (or that there is none): read
		// it alone rather than scan the metadata and spec before it.
		status, err := o.status()
		if err != nil {
			return nil, fmt.Errorf("status of %s: %w", o.Name, err)
		}
		return [][]byte{status}, nil
	}
	members := Members
	if o.parsed() {
		members = validMembers // validated as it was parsed
	}
	values, err := members(o.JSON, names...)
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %w", strings.Join(names, ", "), o.Name, err)
	}
	return values, nil
}

// status is the value of o's status member as the parse found it: nil
// for none or null.
func (o *Object) status() ([]byte, error) {
	if o.WithoutStatus() {
		return nil, nil
	}
	end := len(o.JSON) - 1 // the closing brace
	if o.facts&factStatusLast != 0 {
		for isSpace(o.JSON[end-1]) {
			end--
		}
	} else {
		var err error
		if end, err = skipValidValue(o.JSON, int(o.statusAt)); err != nil {
			return nil, err
		}
	}
	if v := o.JSON[o.statusAt:end]; string(v) != "null" {
		return v, nil
	}
	return nil, nil
}

// Members returns the JSON values of the top-level members names
// (distinct) of the JSON object data, as Object.Members does: the whole
// of data is validated in one pass, the values are cut out of it.
func Members(data []byte, names ...string) ([][]byte, error) {
	return membersWith(EachMember, data, names)
}

// validMembers is Members of data known to be valid JSON (an Object's
// that this package parsed): the values are cut out without being
// validated again.
func validMembers(data []byte, names ...string) ([][]byte, error) {
	return membersWith(EachValidMember, data, names)
}

// membersWith is Members with each as the walk of data's members.
func membersWith(each func([]byte, func(key, value []byte)) error, data []byte, names []string) ([][]byte, error) {
	values := make([][]byte, len(names))
	err := each(data, func(key, value []byte) {
		for i, name := range names {
			if string(key) == name {
				values[i] = value
				break // names are distinct
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for i, v := range values {
		if string(v) == "null" {
			values[i] = nil
		}
	}
	return values, nil
}

// EachMember calls fn with the key and the JSON value of each top-level
// member of the JSON object data, in order (repeated keys each time);
// value is cut out of data, key valid only during the call. The whole of
// data is validated in one pass.
func EachMember(data []byte, fn func(key, value []byte)) error {
	s := scanner{data: data}
	var scratch []byte
	empty, err := s.objectStart(1)
	for !empty && err == nil {
		var m member
		if m, scratch, err = s.memberKey(scratch); err != nil {
			break
		}
		start := s.pos
		if err = s.skipValue(1); err != nil {
			break
		}
		fn(m.key, data[start:s.pos])
		empty, err = s.memberEnd()
	}
	if err == nil {
		s.skipSpace()
		if s.pos < len(s.data) {
			err = s.unexpected()
		}
	}
	return err
}

// validOwnerUID is OwnerUID of data, valid JSON, read without decoding
// the references into structs; ok is false where encoding/json could
// read them otherwise than this reading of the usual form does (a key
// spelt in other letters, a value of another type, an element that is no
// object): OwnerUID decodes them then.
func validOwnerUID(data []byte, plain bool) (uid string, ok bool) {
	meta, err := validMetadata(data, plain)
	if err != nil || meta == nil {
		return "", err == nil
	}
	refs, err := validMembers(meta, "ownerReferences")
	if err != nil || refs[0] == nil {
		return "", err == nil
	}
	return ownerUIDOfList(refs[0])
}

// ownerUIDAt is validOwnerUID of o, a parsed object whose plain metadata
// has ownerReferences at ownersAt: only their value is read.
func (o *Object) ownerUIDAt() (uid string, ok bool) {
	end, err := skipValidValue(o.JSON, int(o.ownersAt))
	if err != nil {
		return "", false
	}
	if list := o.JSON[o.ownersAt:end]; string(list) != "null" {
		return ownerUIDOfList(list)
	}
	return "", true
}

// ownerUIDOfList is validOwnerUID of the metadata.ownerReferences value
// list (valid JSON, not null).
func ownerUIDOfList(list []byte) (uid string, ok bool) {
	var first, controller string
	var found, foundController bool
	ok = true
	_, err := walkValidElements(list, 0, func(at int) (int, error) {
		if list[at] != '{' {
			return 0, errNotValid // encoding/json: null is a zero reference, the rest an error
		}
		var id []byte
		isController := false
		end, _, err := walkValidMembers(list, at, func(key []byte, valueAt int) (int, bool, error) {
			end, err := skipValidValue(list, valueAt)
			if err != nil {
				return 0, false, err
			}
			switch value, k := list[valueAt:end], string(key); k {
			case "uid", "apiVersion", "kind", "name":
				if value[0] != '"' && string(value) != "null" {
					ok = false
				}
				if k == "uid" {
					id = value
				}
			case "controller", "blockOwnerDeletion":
				switch string(value) {
				case "true":
					isController = isController || k == "controller"
				case "false", "null":
					isController = isController && k != "controller"
				default:
					ok = false
				}
			default:
				for _, name := range [...]string{"uid", "apiVersion", "kind", "name", "controller", "blockOwnerDeletion"} {
					if strings.EqualFold(k, name) {
						ok = false // encoding/json would read it as that field
					}
				}
			}
			return end, !ok, nil
		})
		if err != nil || !ok {
			return 0, errNotValid
		}
		s := ""
		if id != nil && id[0] == '"' {
			s = string(appendUnescaped(nil, id[1:len(id)-1]))
		}
		if !found {
			first, found = s, true
		}
		if isController && !foundController {
			controller, foundController = s, true
		}
		return end, nil
	})
	if err != nil || !ok {
		return "", false
	}
	if foundController {
		return controller, true
	}
	return first, true
}

// validMetadata is the object's metadata (nil for none or null), data
// valid JSON: the first metadata member where it is the only one, which
// is found without scanning the members after it (the spec, the status),
// else the last, as a decoder takes it. It is the only one when the
// object holds "metadata" once and no \u escape, with which a key could
// spell it otherwise.
func validMetadata(data []byte, plain bool) ([]byte, error) {
	if !plain && (bytes.Count(data, []byte(`"metadata"`)) != 1 || bytes.Contains(data, []byte(`\u`))) {
		values, err := validMembers(data, "metadata")
		if err != nil {
			return nil, err
		}
		return values[0], nil
	}
	var meta []byte
	err := eachValidMember(data, func(key, value []byte) bool {
		if string(key) != "metadata" {
			return false
		}
		if string(value) != "null" {
			meta = value
		}
		return true
	})
	return meta, err
}

// walkValidElements walks the elements of the array at data[i], known to
// be valid JSON: value is called with the index of each and returns the
// index just past it. It returns the index just past the array.
func walkValidElements(data []byte, i int, value func(at int) (end int, err error)) (int, error) {
	if i >= len(data) || data[i] != '[' {
		return 0, errNotValid
	}
	if i = skipSpaceAt(data, i+1); i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for i < len(data) {
		end, err := value(i)
		if err != nil || end == i {
			return 0, errNotValid
		}
		if i = skipSpaceAt(data, end); i >= len(data) {
			return 0, errNotValid
		}
		switch data[i] {
		case ',':
			i = skipSpaceAt(data, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, errNotValid
		}
	}
	return 0, errNotValid
}
