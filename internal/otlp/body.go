package otlp

import (
	"encoding/json"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
)

// bodyOf is the log body of a record: its JSON, as -o json prints it,
// turned into OpenTelemetry values — objects into maps (the SDK sorts
// their keys), arrays into slices, integers that fit into int64, other
// numbers into float64, null into the empty value — so that a backend can
// query its fields. js is one JSON value the project's own printers
// wrote; anything else is an error. p's scratch space is reused.
func (p *jsonParser) bodyOf(js []byte) (attribute.Value, error) {
	p.data, p.pos = js, 0
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return attribute.Value{}, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return attribute.Value{}, p.fail("trailing data")
	}
	return v, nil
}

// maxDepth bounds the nesting of a body, as encoding/json does.
const maxDepth = 10000

// jsonParser reads one JSON value from data; pos is where it is. The
// members of the maps and slices being read gather in kvs and vs, one
// per depth, reused from value to value: the SDK copies them.
type jsonParser struct {
	data []byte
	pos  int
	kvs  [][]attribute.KeyValue
	vs   [][]attribute.Value
}

// scratchKVs is the emptied scratch slice of maps at depth.
func (p *jsonParser) scratchKVs(depth int) []attribute.KeyValue {
	for len(p.kvs) <= depth {
		p.kvs = append(p.kvs, nil)
	}
	return p.kvs[depth][:0]
}

// scratchVs is the emptied scratch slice of slices at depth.
func (p *jsonParser) scratchVs(depth int) []attribute.Value {
	for len(p.vs) <= depth {
		p.vs = append(p.vs, nil)
	}
	return p.vs[depth][:0]
}

func (p *jsonParser) fail(what string) error {
	return fmt.Errorf("record JSON at byte %d: %s", p.pos, what)
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (attribute.Value, error) {
	if depth > maxDepth {
		return attribute.Value{}, p.fail("nested too deep")
	}
	if p.pos >= len(p.data) {
		return attribute.Value{}, p.fail("unexpected end")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		return attribute.StringValue(s), err
	case c == 't':
		return attribute.BoolValue(true), p.literal("true")
	case c == 'f':
		return attribute.BoolValue(false), p.literal("false")
	case c == 'n':
		return attribute.Value{}, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return attribute.Value{}, p.fail("unexpected character")
}

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail("bad literal")
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) object(depth int) (attribute.Value, error) {
	p.pos++ // {
	kvs := p.scratchKVs(depth)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return attribute.MapValue(), nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return attribute.Value{}, p.fail("want a key")
		}
		key, err := p.str()
		if err != nil {
			return attribute.Value{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return attribute.Value{}, p.fail("want ':'")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return attribute.Value{}, err
		}
		kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(key), Value: v})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return attribute.Value{}, p.fail("unexpected end")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.kvs[depth] = kvs
			return attribute.MapValue(kvs...), nil
		default:
			return attribute.Value{}, p.fail("want ',' or '}'")
		}
	}
}

func (p *jsonParser) array(depth int) (attribute.Value, error) {
	p.pos++ // [
	vs := p.scratchVs(depth)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return attribute.SliceValue(), nil
	}
	for {
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return attribute.Value{}, err
		}
		vs = append(vs, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return attribute.Value{}, p.fail("unexpected end")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.vs[depth] = vs
			return attribute.SliceValue(vs...), nil
		default:
			return attribute.Value{}, p.fail("want ',' or ']'")
		}
	}
}

// str reads a string: without escapes its bytes as they are, else
// decoded as encoding/json decodes it.
func (p *jsonParser) str() (string, error) {
	start := p.pos
	p.pos++ // "
	escaped := false
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '\\':
			escaped = true
			p.pos += 2
			continue
		case '"':
			p.pos++
			if !escaped {
				return string(p.data[start+1 : p.pos-1]), nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				return "", p.fail("bad string")
			}
			return s, nil
		}
		p.pos++
	}
	return "", p.fail("unterminated string")
}

// number reads a number: an int64 when it is an integer that fits, else
// a float64.
func (p *jsonParser) number() (attribute.Value, error) {
	start := p.pos
	integer := true
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '.' || c == 'e' || c == 'E' {
			integer = false
		} else if c != '-' && c != '+' && (c < '0' || c > '9') {
			break
		}
		p.pos++
	}
	text := string(p.data[start:p.pos])
	if integer {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return attribute.Int64Value(n), nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return attribute.Value{}, p.fail("bad number " + strconv.Quote(text))
	}
	return attribute.Float64Value(f), nil
}
