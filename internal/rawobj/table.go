package rawobj

import (
	"encoding/json"
	"fmt"
)

// Server-side Tables (Accept: application/json;as=Table;v=v1;g=meta.k8s.io,
// with includeObject=Object): the list parser reads a Table as a list
// whose items are its rows' objects, each with its row's cells:
//
//	{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{…},
//	 "columnDefinitions":[{"name":"Name","type":"string","format":"name","priority":0,…},…],
//	 "rows":[{"cells":["web-1","1/1","Running",…],"object":{…the whole object…}},…]}

// tableMember parses the member key of a Table: its column definitions or
// its rows.
func (lp *listParser) tableMember(key string, l *List) (err error) {
	if key == "columnDefinitions" {
		l.Columns, err = lp.columns()
		return err
	}
	if lp.handedOut > 0 {
		return fmt.Errorf("%w: the table has a second rows member at offset %d after its rows were handed out", ErrNotStreamable, lp.s.offset(lp.s.pos))
	}
	l.Items, err = lp.rows(l.Columns)
	return err
}

// columns parses the columnDefinitions member (an array or null) at s.pos.
// Definitions are few and small: encoding/json decodes them.
func (lp *listParser) columns() ([]TableColumn, error) {
	const depth = 1 // of the member's value's container
	s := &lp.s
	if _, err := lp.value(); err != nil {
		return nil, err
	}
	start := s.pos
	if err := s.skipValue(depth); err != nil {
		return nil, err
	}
	var cols []TableColumn
	if err := json.Unmarshal(s.data[start:s.pos], &cols); err != nil {
		return nil, fmt.Errorf("columnDefinitions at offset %d: %w", s.offset(start), err)
	}
	return cols, nil
}

// rows parses the rows array (or null) at s.pos, the value of a member of
// the top-level Table, whose first byte is buffered. Each row's object
// becomes an item, with the row's cells and the Table's columns.
func (lp *listParser) rows(columns []TableColumn) ([]*Object, error) {
	return lp.objects("rows", func(i, depth int) (*Object, error) {
		o, err := lp.row(i, depth)
		if err == nil {
			o.Row.Columns = columns
		}
		return o, err
	})
}

// row parses row number index at s.pos (after whitespace), an object at
// nesting level depth with the members cells and object.
func (lp *listParser) row(index, depth int) (*Object, error) {
	s := &lp.s
	if err := lp.skip(); err != nil {
		return nil, err
	}
	if s.peek() != '{' {
		if s.pos >= len(s.data) {
			return nil, s.unexpected()
		}
		return nil, fmt.Errorf("row at offset %d is not an object", s.offset(s.pos))
	}
	if _, err := lp.space(1); err != nil {
		return nil, err
	}
	empty, err := s.objectStart(depth)
	if err != nil {
		return nil, err
	}
	var cells []byte
	var obj *Object
	tm := newTypeMeta("", "")
	for !empty {
		if err := lp.member(); err != nil {
			return nil, err
		}
		var m member
		m, lp.scratch, err = s.memberKey(lp.scratch)
		if err != nil {
			return nil, err
		}
		switch string(m.key) {
		case "cells":
			if _, err = lp.value(); err == nil {
				start := s.pos
				if err = s.skipValue(depth); err == nil {
					cells = append([]byte(nil), s.data[start:s.pos]...)
				}
			}
		case "object":
			obj, err = lp.item(index, &tm, depth+1)
		default:
			if _, err = lp.value(); err == nil {
				err = s.skipValue(depth)
			}
		}
		if err != nil {
			return nil, err
		}
		if _, err := lp.space(0); err != nil {
			return nil, err
		}
		if empty, err = s.memberEnd(); err != nil {
			return nil, err
		}
	}
	if obj == nil {
		return nil, fmt.Errorf("a row without its object: ask for the Table with includeObject=Object")
	}
	obj.Row = &TableRow{Cells: cells}
	return obj, nil
}

// NextTableEvent is NextEvent for a watch that asked for Tables
// (includeObject=Object): an event's object is a one-row Table, and obj is
// that row's object with the row's Cells and, when the Table carried them
// (the server sends them with the first event only), its Columns. An
// event whose object is not a Table (a server that cannot render the type
// answers with plain objects) is parsed as by NextEvent. Tables are small
// here, one row each: encoding/json frames them, Parse parses the object.
func (d *Decoder) NextTableEvent(opts ParseOptions) (eventType string, obj *Object, status []byte, err error) {
	frame, err := d.Next()
	if err != nil {
		return "", nil, nil, err
	}
	var e struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(frame, &e); err != nil {
		return "", nil, nil, &EventError{Err: fmt.Errorf("reading a watch event: %w", err)}
	}
	mode := objectMode(e.Type)
	switch {
	case e.Type == eventError:
		return eventError, nil, e.Object, nil
	case mode == modeNone:
		return "", nil, nil, &EventError{Type: e.Type, Err: fmt.Errorf("unknown watch event type %q", e.Type)}
	case mode == modeBookmark:
		opts.AllowMissingName = true
	}
	eventType = objectType(e.Type)
	var table struct {
		Kind    string        `json:"kind"`
		Columns []TableColumn `json:"columnDefinitions"`
		Rows    []struct {
			Cells  json.RawMessage `json:"cells"`
			Object json.RawMessage `json:"object"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(e.Object, &table); err != nil {
		return "", nil, nil, &EventError{Type: eventType, Err: fmt.Errorf("reading the object of a %s event: %w", eventType, err)}
	}
	if table.Kind != "Table" {
		obj, err := Parse(e.Object, opts)
		if err != nil {
			return "", nil, nil, &EventError{Type: eventType, Err: err}
		}
		return eventType, obj, nil, nil
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Object) == 0 {
		return "", nil, nil, &EventError{Type: eventType, Err: fmt.Errorf("a %s event's Table has %d rows with objects, want 1 (ask with includeObject=Object)", eventType, len(table.Rows))}
	}
	row := table.Rows[0]
	if obj, err = Parse(row.Object, opts); err != nil {
		return "", nil, nil, &EventError{Type: eventType, Err: err}
	}
	obj.Row = &TableRow{Cells: append([]byte(nil), row.Cells...), Columns: table.Columns}
	return eventType, obj, nil, nil
}

// objectType is the constant of a watch event type that has an object,
// so that the returned type does not alias the frame.
func objectType(t string) string {
	switch t {
	case eventAdded:
		return eventAdded
	case eventModified:
		return eventModified
	case eventDeleted:
		return eventDeleted
	}
	return eventBookmark
}
