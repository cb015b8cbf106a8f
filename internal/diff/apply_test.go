package diff

import (
	"errors"
	"reflect"
	"testing"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		ops     []Operation
		want    string
		wantErr bool
	}{
		{name: "add key", doc: `{"a":1}`, ops: []Operation{{Op: OpAdd, Path: "/b", Value: "x"}}, want: `{"a":1,"b":"x"}`},
		{name: "add replaces existing key", doc: `{"a":1}`, ops: []Operation{{Op: OpAdd, Path: "/a", Value: 2.0}}, want: `{"a":2}`},
		{name: "add inserts into list", doc: `{"l":[1,3]}`, ops: []Operation{{Op: OpAdd, Path: "/l/1", Value: 2.0}}, want: `{"l":[1,2,3]}`},
		{name: "add at list end", doc: `{"l":[1]}`, ops: []Operation{{Op: OpAdd, Path: "/l/1", Value: 2.0}}, want: `{"l":[1,2]}`},
		{name: "add with dash appends", doc: `{"l":[1]}`, ops: []Operation{{Op: OpAdd, Path: "/l/-", Value: 2.0}}, want: `{"l":[1,2]}`},
		{name: "remove key", doc: `{"a":1,"b":2}`, ops: []Operation{{Op: OpRemove, Path: "/a"}}, want: `{"b":2}`},
		{name: "remove list element", doc: `{"l":[1,2,3]}`, ops: []Operation{{Op: OpRemove, Path: "/l/0"}}, want: `{"l":[2,3]}`},
		{name: "replace nested", doc: `{"a":{"b":[{"c":1}]}}`, ops: []Operation{{Op: OpReplace, Path: "/a/b/0/c", Value: 2.0}}, want: `{"a":{"b":[{"c":2}]}}`},
		{name: "escaped keys", doc: `{"a/b":{"c~d":1}}`, ops: []Operation{{Op: OpReplace, Path: "/a~1b/c~0d", Value: 2.0}}, want: `{"a/b":{"c~d":2}}`},
		{name: "replace root", doc: `{"a":1}`, ops: []Operation{{Op: OpReplace, Path: "", Value: []any{1.0}}}, want: `[1]`},
		{name: "sequence", doc: `{"l":[1,2,3]}`, ops: []Operation{
			{Op: OpRemove, Path: "/l/2"}, {Op: OpRemove, Path: "/l/0"}, {Op: OpAdd, Path: "/l/0", Value: 0.0},
		}, want: `{"l":[0,2]}`},
		{name: "no ops", doc: `{"a":1}`, ops: nil, want: `{"a":1}`},
		{name: "remove missing key", doc: `{"a":1}`, ops: []Operation{{Op: OpRemove, Path: "/b"}}, wantErr: true},
		{name: "replace missing key", doc: `{"a":1}`, ops: []Operation{{Op: OpReplace, Path: "/b", Value: 1.0}}, wantErr: true},
		{name: "missing parent", doc: `{"a":1}`, ops: []Operation{{Op: OpAdd, Path: "/b/c", Value: 1.0}}, wantErr: true},
		{name: "index out of range", doc: `{"l":[1]}`, ops: []Operation{{Op: OpAdd, Path: "/l/2", Value: 1.0}}, wantErr: true},
		{name: "remove out of range", doc: `{"l":[1]}`, ops: []Operation{{Op: OpRemove, Path: "/l/1"}}, wantErr: true},
		{name: "leading zero index", doc: `{"l":[1,2]}`, ops: []Operation{{Op: OpReplace, Path: "/l/01", Value: 1.0}}, wantErr: true},
		{name: "dash only for add", doc: `{"l":[1]}`, ops: []Operation{{Op: OpRemove, Path: "/l/-"}}, wantErr: true},
		{name: "into a scalar", doc: `{"a":1}`, ops: []Operation{{Op: OpAdd, Path: "/a/b", Value: 1.0}}, wantErr: true},
		{name: "remove root", doc: `{"a":1}`, ops: []Operation{{Op: OpRemove, Path: ""}}, wantErr: true},
		{name: "bad pointer", doc: `{"a":1}`, ops: []Operation{{Op: OpAdd, Path: "a", Value: 1.0}}, wantErr: true},
		{name: "unknown op", doc: `{"a":1}`, ops: []Operation{{Op: "move", Path: "/a"}}, wantErr: true},
		{name: "redacted", doc: `{"a":1}`, ops: []Operation{{Op: OpReplace, Path: "/a", Redacted: true}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := decode(t, tt.doc)
			before := normalize(t, doc)
			got, err := Apply(doc, tt.ops)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Apply() = %#v, want an error", got)
				}
			} else {
				if err != nil {
					t.Fatalf("Apply(): %v", err)
				}
				if g, w := normalize(t, got), decode(t, tt.want); !reflect.DeepEqual(g, w) {
					t.Errorf("Apply() = %#v, want %#v", g, w)
				}
			}
			if after := normalize(t, doc); !reflect.DeepEqual(after, before) {
				t.Errorf("Apply modified its input: %#v, was %#v", after, before)
			}
		})
	}
}

func TestApplyRedactedError(t *testing.T) {
	_, err := Apply(map[string]any{}, []Operation{{Op: OpAdd, Path: "/a", Redacted: true}})
	if !errors.Is(err, errRedacted) {
		t.Errorf("Apply(redacted) error = %v, want %v", err, errRedacted)
	}
}

func TestApplyDoesNotAliasValues(t *testing.T) {
	value := map[string]any{"x": []any{1.0}}
	got, err := Apply(map[string]any{}, []Operation{{Op: OpAdd, Path: "/a", Value: value}})
	if err != nil {
		t.Fatalf("Apply(): %v", err)
	}
	got.(map[string]any)["a"].(map[string]any)["x"].([]any)[0] = 2.0
	if value["x"].([]any)[0] != 1.0 {
		t.Errorf("changing Apply's result changed the operation's value: %#v", value)
	}
}
