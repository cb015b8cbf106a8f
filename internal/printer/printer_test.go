package printer

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the printers' output")

// t0 is when the first test record was popped.
func t0() time.Time { return time.Date(2026, 11, 21, 20, 48, 40, 123456000, time.UTC) }

// testNow is "now" for AGE: ten seconds after the first record.
func testNow() time.Time { return t0().Add(10 * time.Second) }

// testLocation is the "local" zone of human-readable times in tests.
func testLocation() *time.Location { return time.FixedZone("CET", 3600) }

func object(s string) json.RawMessage { return json.RawMessage(s) }

// testRecords is the fixed sequence every format prints: the initial list,
// changes with and without a diff, a deletion and a tombstone, a resync, a
// cluster-scoped object, a non-core kind and a Secret with redacted values.
func testRecords() []*Record {
	const (
		cmV1   = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo","namespace":"tmp","uid":"6f1d4a52-6c0e-4c38-9d6c-0c4c2f1a7e01","resourceVersion":"%s","creationTimestamp":"2026-11-21T20:48:35Z","labels":{"app":"demo"%s}},"data":{%s}}`
		caCert = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kube-root-ca.crt","namespace":"tmp","uid":"0b8f3c1e-2f5d-4a8e-9b1a-3e6f7d2c9a10","resourceVersion":"%s","creationTimestamp":"2026-11-19T09:00:00Z"},"data":{"ca.crt":"-----BEGIN CERTIFICATE-----\nMIIC5zCCAc+gAwIBAgIBADANBgkqhkiG9w0BAQsFADAVMRMwEQYDVQQDEwprdWJl\n-----END CERTIFICATE-----\n"}}`
	)
	const (
		demoUID   = "6f1d4a52-6c0e-4c38-9d6c-0c4c2f1a7e01"
		caCertUID = "0b8f3c1e-2f5d-4a8e-9b1a-3e6f7d2c9a10"
	)
	cm := func(typ string, sec int, name, uid, rv string, obj string) *Record {
		return &Record{
			Type: typ, Time: t0().Add(time.Duration(sec) * time.Second),
			APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps",
			Namespace: "tmp", Name: name, UID: uid, ResourceVersion: rv,
			Object: object(obj),
		}
	}
	records := []*Record{
		cm("Replaced", 0, "kube-root-ca.crt", caCertUID, "100", fmt.Sprintf(caCert, "100")),
		cm("Added", 1, "demo", demoUID, "101", fmt.Sprintf(cmV1, "101", "", `"key":"a","old":"x","long":"short"`)),
		cm("Updated", 2, "demo", demoUID, "102", fmt.Sprintf(cmV1, "102", `,"tier":"web"`, `"key":"b","long":"`+strings.Repeat("0123456789", 8)+`","html":"<b> & \"quoted\""`)),
		cm("Updated", 3, "kube-root-ca.crt", caCertUID, "104", fmt.Sprintf(caCert, "104")),
		cm("Deleted", 4, "demo", demoUID, "105", fmt.Sprintf(cmV1, "105", `,"tier":"web"`, `"key":"b"`)),
		cm("Deleted", 5, "gone", "", "", ""),
		cm("Sync", 6, "kube-root-ca.crt", caCertUID, "104", fmt.Sprintf(caCert, "104")),
		{
			Type: "Added", Time: t0().Add(7 * time.Second),
			APIVersion: "v1", Kind: "Namespace", Resource: "namespaces",
			Name: "tmp", UID: "9c2e1f4b-7a3d-4e5f-8b6c-1d2e3f4a5b6c", ResourceVersion: "7",
			Manager: "kubectl-create", Operation: "Update",
			Object: object(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tmp","uid":"9c2e1f4b-7a3d-4e5f-8b6c-1d2e3f4a5b6c","resourceVersion":"7","creationTimestamp":"2026-11-19T08:00:00Z","labels":{"kubernetes.io/metadata.name":"tmp"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`),
		},
		{
			Type: "Updated", Time: t0().Add(8 * time.Second),
			APIVersion: "apps/v1", Kind: "Deployment", Resource: "deployments",
			Namespace: "tmp", Name: "web", UID: "3a4b5c6d-7e8f-4a1b-9c2d-3e4f5a6b7c8d", ResourceVersion: "20931",
			Manager: "kubectl-scale", Operation: "Update",
			Changes: []diff.Operation{{Op: diff.OpReplace, Path: "/spec/replicas", Old: int64(1), Value: int64(3)}},
			Object:  object(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"tmp","uid":"3a4b5c6d-7e8f-4a1b-9c2d-3e4f5a6b7c8d","resourceVersion":"20931","generation":2,"creationTimestamp":"2026-11-21T17:12:00Z"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}}}}`),
		},
		{
			Type: "Updated", Time: t0().Add(9 * time.Second),
			APIVersion: "v1", Kind: "Secret", Resource: "secrets",
			Namespace: "tmp", Name: "creds", UID: "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", ResourceVersion: "20940",
			Manager: "kubectl-client-side-apply", Operation: "Update",
			Changes: []diff.Operation{
				{Op: diff.OpReplace, Path: "/data/password", Redacted: true},
				{Op: diff.OpAdd, Path: "/data/token", Redacted: true},
			},
			Object: object(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds","namespace":"tmp","uid":"5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9","resourceVersion":"20940","creationTimestamp":"2026-11-21T20:00:00Z"},"type":"Opaque","data":{"password":"REDACTED","token":"REDACTED"}}`),
		},
	}
	// The diff of the Updated demo, folded from three updates.
	u := records[2]
	u.Coalesced = 2
	u.Manager, u.Operation = "kubectl-edit", "Update"
	u.Changes = []diff.Operation{
		{Op: diff.OpReplace, Path: "/data/key", Old: "a", Value: "b"},
		{Op: diff.OpAdd, Path: "/metadata/labels/tier", Value: "web"},
		{Op: diff.OpRemove, Path: "/data/old", Old: "x"},
		{Op: diff.OpReplace, Path: "/data/long", Old: "short", Value: strings.Repeat("0123456789", 8)},
		{Op: diff.OpAdd, Path: "/data/html", Value: `<b> & "quoted"`},
	}
	// A resync-less relist found it unchanged: an empty, non-nil diff.
	records[3].Changes = []diff.Operation{}
	records[0].Initial = true
	records[5].FinalStateUnknown = true
	return records
}

func testOptions(format string) Options {
	return Options{Format: format, Now: testNow, Location: testLocation()}
}

// printAll prints records with a printer made from o.
func printAll(t testing.TB, o Options, records []*Record) string {
	t.Helper()
	p, err := New(o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	var out bytes.Buffer
	for _, r := range records {
		if err := p.Print(&out, r); err != nil {
			t.Fatalf("Print(%s %s): %v", r.Type, r.Name, err)
		}
	}
	if rel, ok := p.(Releaser); ok { // as the caller does at the end
		if err := rel.Release(&out); err != nil {
			t.Fatalf("Release: %v", err)
		}
	}
	return out.String()
}

func TestGolden(t *testing.T) {
	with := func(o Options, f func(*Options)) Options {
		f(&o)
		return o
	}
	tests := []struct {
		name string
		opts Options
	}{
		{"text", testOptions("")},
		{"text-color", with(testOptions("text"), func(o *Options) { o.Color = true })},
		{"text-timestamps", with(testOptions("text"), func(o *Options) { o.Timestamps = true })},
		{"text-multitype", with(testOptions("text"), func(o *Options) { o.MultiType = true })},
		{"text-allnamespaces", with(testOptions("text"), func(o *Options) { o.AllNamespaces = true })},
		{"text-multitype-allnamespaces-manager", with(testOptions("text"), func(o *Options) {
			o.MultiType, o.AllNamespaces, o.ShowManager = true, true, true
		})},
		{"text-color-timestamps", with(testOptions("text"), func(o *Options) { o.Color, o.Timestamps = true, true })},
		{"wide", testOptions("wide")},
		{"wide-diff", with(testOptions("wide"), func(o *Options) { o.Diff = true })},
		{"wide-noheaders", with(testOptions("wide"), func(o *Options) { o.NoHeaders = true })},
		{"wide-color-timestamps", with(testOptions("wide"), func(o *Options) { o.Color, o.Timestamps = true, true })},
		{"json", testOptions("json")},
		{"yaml", testOptions("yaml")},
		{"name", testOptions("name")},
		{"jsonpath", testOptions(`jsonpath={.type} {.object.metadata.name}{"\n"}`)},
		{"jsonpath-range", testOptions(`jsonpath={.type} {.name}:{range .changes[*]} {.op} {.path}{end}{"\n"}`)},
		{"jsonpath-as-json", testOptions(`jsonpath-as-json={.name}`)},
		{"go-template", testOptions(`go-template={{.type}} {{.kind}} {{.name}}{{if .coalesced}} coalesced={{.coalesced}}{{end}}{{range .changes}} {{.op}}:{{.path}}{{end}}{{if exists .object "metadata" "labels" "app"}} app={{.object.metadata.labels.app}}{{end}}{{"\n"}}`)},
		{"custom-columns", testOptions(`custom-columns=TYPE:.type,NAMESPACE:.namespace,NAME:.object.metadata.name,RV:{.resourceVersion},LABELS:object.metadata.labels,CHANGES:.changes[*].path`)},
		{"custom-columns-noheaders", with(testOptions(`custom-columns=TYPE:.type,NAME:{name},REPLICAS:.object.spec.replicas`), func(o *Options) { o.NoHeaders = true })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := printAll(t, tt.opts, testRecords())
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/printer/ -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test ./internal/printer/ -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
			if !strings.HasPrefix(tt.opts.Format, "jsonpath") && !strings.HasPrefix(tt.opts.Format, "go-template") &&
				strings.Contains(got, " \n") {
				t.Errorf("output has trailing spaces:\n%s", got)
			}
		})
	}
}

// TestFileFormats checks that the -file variants read their argument from a
// file and print as the inline ones do.
func TestFileFormats(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, fileFormat, content, inline string
	}{
		{"jsonpath", "jsonpath-file", `{.type} {.name}{"\n"}`, `jsonpath={.type} {.name}{"\n"}`},
		{"go-template", "go-template-file", "{{.type}} {{.name}}\n", "go-template={{.type}} {{.name}}\n"},
		{"custom-columns", "custom-columns-file", "TYPE   NAME\n.type  {.object.metadata.name}\n", "custom-columns=TYPE:.type,NAME:{.object.metadata.name}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, tt.name)
			if err := os.WriteFile(file, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got := printAll(t, testOptions(tt.fileFormat+"="+file), testRecords())
			want := printAll(t, testOptions(tt.inline), testRecords())
			if got != want {
				t.Errorf("-o %s=FILE printed\n%s\nwant, as -o %s:\n%s", tt.fileFormat, got, tt.inline, want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	const allowed = "allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,text,wide,yaml"
	missing := filepath.Join(t.TempDir(), "missing")
	badColumnsFile := filepath.Join(t.TempDir(), "columns")
	if err := os.WriteFile(badColumnsFile, []byte("A B\n.a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		format string
		want   string // the whole message, or a prefix when it ends in "…"
	}{
		{"unknown", "foo", `unable to match a printer suitable for the output format "foo", ` + allowed},
		{"upper case", "JSON", `unable to match a printer suitable for the output format "JSON", ` + allowed},
		{"argument to json", "json=x", `unable to match a printer suitable for the output format "json=x", ` + allowed},
		{"go template alias", "template={{.type}}", `unable to match a printer suitable for the output format "template={{.type}}", ` + allowed},
		{"jsonpath without template", "jsonpath", `--output=jsonpath needs an argument, e.g. --output=jsonpath='{.type} {.object.metadata.name}{"\n"}'`},
		{"empty jsonpath", "jsonpath=", `--output=jsonpath needs an argument, e.g. --output=jsonpath='{.type} {.object.metadata.name}{"\n"}'`},
		{"go-template without template", "go-template", `--output=go-template needs an argument, e.g. --output=go-template='{{.type}} {{.object.metadata.name}}{{"\n"}}'`},
		{"custom-columns without spec", "custom-columns=", `--output=custom-columns needs an argument, e.g. --output=custom-columns=TYPE:.type,NAME:.object.metadata.name`},
		{"jsonpath-file without file", "jsonpath-file", `--output=jsonpath-file needs an argument, e.g. --output=jsonpath-file=FILE`},
		{"bad jsonpath", "jsonpath={.type", `invalid --output=jsonpath template "{.type": unclosed action`},
		{"bad jsonpath-as-json", "jsonpath-as-json={.a[}", `invalid --output=jsonpath-as-json template "{.a[}": …`},
		{"bad go-template", "go-template={{.type", `invalid --output=go-template template "{{.type": template: output:1: unclosed action`},
		{"go-template unknown function", "go-template={{nope .type}}", `invalid --output=go-template template "{{nope .type}}": template: output:1: function "nope" not defined`},
		{"custom-columns without colon", "custom-columns=NAME", `invalid --output=custom-columns column "NAME", expected <header>:<json-path-expr> as in TYPE:.type`},
		{"custom-columns empty path", "custom-columns=NAME:", `invalid --output=custom-columns path "" of column NAME, expected a path like .object.metadata.name, object.metadata.name or {.object.metadata.name}`},
		{"custom-columns two expressions", "custom-columns=NAME:{.a}{.b}", `invalid --output=custom-columns path "{.a}{.b}" of column NAME, expected …`},
		{"custom-columns bad path", "custom-columns=NAME:.a[", `invalid --output=custom-columns path ".a[" of column NAME: …`},
		{"missing file", "go-template-file=" + missing, `cannot read the --output=go-template-file file: open ` + missing + `: no such file or directory`},
		{"custom-columns-file mismatch", "custom-columns-file=" + badColumnsFile, `invalid --output=custom-columns-file template: 2 headers but 1 paths`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(Options{Format: tt.format})
			if err == nil {
				t.Fatalf("New(%q) = %T, want error %q", tt.format, p, tt.want)
			}
			got := err.Error()
			if prefix, ok := strings.CutSuffix(tt.want, "…"); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("New(%q) error = %q, want it to start with %q", tt.format, got, prefix)
				}
			} else if got != tt.want {
				t.Errorf("New(%q) error =\n%q\nwant\n%q", tt.format, got, tt.want)
			}
		})
	}
}

func TestNoCompatiblePrinterError(t *testing.T) {
	_, err := New(Options{Format: "foo"})
	var e *NoCompatiblePrinterError
	if !errors.As(err, &e) {
		t.Fatalf("New(foo) error = %T %v, want a *NoCompatiblePrinterError", err, err)
	}
	if e.OutputFormat != "foo" {
		t.Errorf("OutputFormat = %q, want foo", e.OutputFormat)
	}
}

func TestAllowedFormatsAreAccepted(t *testing.T) {
	args := map[string]string{
		"jsonpath": "={.type}", "jsonpath-as-json": "={.type}", "go-template": "={{.type}}",
		"custom-columns": "=TYPE:.type",
	}
	for _, f := range AllowedFormats() {
		if strings.HasSuffix(f, "-file") {
			continue // TestFileFormats
		}
		if _, err := New(Options{Format: f + args[f]}); err != nil {
			t.Errorf("New(%q): %v", f+args[f], err)
		}
	}
}

// jsonKeys returns the top-level keys of a JSON object, in order.
func jsonKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("line does not start an object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// wantKeys is the documented key order of a record's JSON form.
func wantKeys(r *Record) []string {
	keys := []string{"type", "time", "initial"}
	if r.Context != "" {
		keys = append(keys, "context")
	}
	keys = append(keys, "apiVersion", "kind", "resource", "namespace", "name", "uid", "resourceVersion")
	if r.FinalStateUnknown {
		keys = append(keys, "finalStateUnknown")
	}
	if r.Coalesced != 0 {
		keys = append(keys, "coalesced")
	}
	if len(r.Owners) > 0 {
		keys = append(keys, "owners")
	}
	if r.Manager != "" {
		keys = append(keys, "manager")
	}
	if r.Operation != "" {
		keys = append(keys, "operation")
	}
	if r.Changes != nil {
		keys = append(keys, "changes")
	}
	return append(keys, "object")
}

func TestJSONLines(t *testing.T) {
	records := testRecords()
	out := printAll(t, testOptions("json"), records)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(records) {
		t.Fatalf("got %d lines, want one per record (%d):\n%s", len(lines), len(records), out)
	}
	for i, line := range lines {
		r := records[i]
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", i+1, err, line)
		}
		if keys, want := jsonKeys(t, line), wantKeys(r); strings.Join(keys, ",") != strings.Join(want, ",") {
			t.Errorf("line %d keys = %v, want %v", i+1, keys, want)
		}
		if got["type"] != r.Type || got["name"] != r.Name || got["initial"] != r.Initial {
			t.Errorf("line %d = %v, want type %s name %s initial %v", i+1, got, r.Type, r.Name, r.Initial)
		}
		tm, err := time.Parse(time.RFC3339Nano, got["time"].(string))
		if err != nil || !tm.Equal(r.Time) {
			t.Errorf("line %d time = %v (%v), want %v", i+1, got["time"], err, r.Time)
		}
		var obj any
		if len(r.Object) > 0 {
			if err := json.Unmarshal(r.Object, &obj); err != nil {
				t.Fatal(err)
			}
		}
		if want, _ := json.Marshal(obj); !bytes.Equal(mustMarshal(t, got["object"]), want) {
			t.Errorf("line %d object = %v, want %s", i+1, got["object"], want)
		}
	}
}

// TestJSONLinesJQ pipes -o json into jq, as scripts do.
func TestJSONLinesJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Fatal("jq is required by this test (apt-get install jq); .ci/run installs it")
	}
	cmd := exec.Command(jq, "-r", `select(.type=="Deleted") | "\(.name) \(.finalStateUnknown // false) \(.object.kind // "null")"`)
	cmd.Stdin = strings.NewReader(printAll(t, testOptions("json"), testRecords()))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	if got, want := string(out), "demo false ConfigMap\ngone true null\n"; got != want {
		t.Errorf("jq printed %q, want %q", got, want)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendJSONChanges(t *testing.T) {
	r := &Record{Type: "Updated", Time: t0(), Changes: []diff.Operation{
		{Op: diff.OpReplace, Path: "/spec/replicas", Old: int64(1), Value: float64(3)},
		{Op: diff.OpAdd, Path: "/metadata/labels/a~1b", Value: nil},
		{Op: diff.OpRemove, Path: "/data/k", Old: map[string]any{"z": []any{true, json.Number("1.5")}, "a": "<&>"}},
		{Op: diff.OpReplace, Path: "/data/password", Old: "old", Value: "new", Redacted: true},
		{Op: diff.OpAdd, Path: "/x", Value: map[string]string{"k": "<v>"}},
		{Op: diff.OpAdd, Path: "/f", Value: []float64{1e21, 1e-7, 0.5}},
	}}
	var got struct {
		Changes []json.RawMessage `json:"changes"`
	}
	if err := json.Unmarshal(AppendJSON(nil, r), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"op":"replace","path":"/spec/replicas","old":1,"value":3}`,
		`{"op":"add","path":"/metadata/labels/a~1b","value":null}`,
		`{"op":"remove","path":"/data/k","old":{"a":"<&>","z":[true,1.5]}}`,
		`{"op":"replace","path":"/data/password","redacted":true}`,
		`{"op":"add","path":"/x","value":{"k":"<v>"}}`,
		`{"op":"add","path":"/f","value":[1e+21,1e-7,0.5]}`,
	}
	if len(got.Changes) != len(want) {
		t.Fatalf("got %d changes, want %d", len(got.Changes), len(want))
	}
	for i := range want {
		if string(got.Changes[i]) != want[i] {
			t.Errorf("change %d = %s, want %s", i, got.Changes[i], want[i])
		}
	}
}

func TestAppendOperationMatchesMarshalJSON(t *testing.T) {
	ops := []diff.Operation{
		{Op: diff.OpReplace, Path: "/spec/replicas", Old: int64(1), Value: int64(3)},
		{Op: diff.OpReplace, Path: "/data/k", Old: "<a>", Value: "b\n\u2028"},
		{Op: diff.OpAdd, Path: "/metadata/labels/a~1b", Value: nil},
		{Op: diff.OpAdd, Path: "/f", Value: []any{1e21, 1e-7, 0.5, json.Number("12345678901234567890")}},
		{Op: diff.OpRemove, Path: "/data/k", Old: map[string]any{"z": []any{true, nil}, "a": "&"}},
		{Op: diff.OpRemove, Path: "/spec/foo", Old: nil},
		{Op: diff.OpReplace, Path: "/data/password", Old: "old", Value: "new", Redacted: true},
		{Op: diff.OpAdd, Path: "/data/token", Redacted: true},
		{Op: "move", Path: "/a", Value: "x"},
		{Op: "test", Path: "/b"},
	}
	for _, op := range ops {
		want, err := op.MarshalJSON()
		if err != nil {
			t.Fatalf("%+v: MarshalJSON: %v", op, err)
		}
		if got := appendOperation(nil, &op); string(got) != string(want) {
			t.Errorf("appendOperation(%+v) = %s, want MarshalJSON's %s", op, got, want)
		}
	}
}

func TestAppendJSONObject(t *testing.T) {
	tests := []struct {
		name, object, want string
	}{
		{"empty", "", "null"},
		{"null", "null", "null"},
		{"spaces", "  {\"a\":1} ", `{"a":1}`},
		{"indented", "{\n  \"a\": [1, 2],\n  \"b\": \"x\"\n}\n", `{"a":[1,2],"b":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := string(AppendJSON(nil, &Record{Type: "Added", Object: object(tt.object)}))
			_, got, _ := strings.Cut(line, `"object":`)
			if got != tt.want+"}" {
				t.Errorf("object = %s, want %s}", got, tt.want)
			}
		})
	}
}

// encodingJSON encodes v as encoding/json does with HTML escaping off.
func encodingJSON(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestAppendValueMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, false, "s<>", 0.0, math.Copysign(0, -1), 1.0, 1.5, 1e20, 1e21, 1e-6, 1e-7, -2.5e-9, 123456789.0,
		int64(-42), 7, json.Number("12345678901234567890"),
		[]any{}, map[string]any{}, []any{1.0, "a", nil, map[string]any{"b": "<", "a": []any{false}}},
		[]string{"<x>"}, map[string]int{"b": 1, "a": 2},
	}
	for _, v := range values {
		if got, want := string(appendValue(nil, v)), encodingJSON(t, v); got != want {
			t.Errorf("appendValue(%#v) = %s, want %s", v, got, want)
		}
	}
}

func TestYAMLDocuments(t *testing.T) {
	records := testRecords()
	out := printAll(t, testOptions("yaml"), records)
	if strings.HasPrefix(out, "---") {
		t.Errorf("yaml output starts with a separator:\n%s", out)
	}
	// A document ends at a line "---"; the newline before it is its own.
	docs := strings.Split("\n"+out, "\n---\n")
	docs[0] = docs[0][1:]
	for i := range docs[:len(docs)-1] {
		docs[i] += "\n"
	}
	if len(docs) != len(records) {
		t.Fatalf("got %d documents, want %d:\n%s", len(docs), len(records), out)
	}
	for i, doc := range docs {
		var got map[string]any
		if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
			t.Fatalf("document %d does not parse: %v\n%s", i+1, err, doc)
		}
		var want map[string]any
		if err := json.Unmarshal(AppendJSON(nil, records[i]), &want); err != nil {
			t.Fatal(err)
		}
		if g, w := mustMarshal(t, got), mustMarshal(t, want); !bytes.Equal(g, w) {
			t.Errorf("document %d =\n%s\nwant the JSON record\n%s", i+1, g, w)
		}
		if !strings.HasPrefix(doc, "type: ") {
			t.Errorf("document %d does not start with the type:\n%s", i+1, doc)
		}
	}
}

func TestTextEscapesControlCharacters(t *testing.T) {
	r := &Record{Type: "Updated", Name: "demo", Manager: "evil\x1b[2J\nAdded: fake\u0085", Changes: []diff.Operation{}}
	got := printAll(t, testOptions("text"), []*Record{r})
	want := "Updated: demo by evil\\x1b[2J\\nAdded: fake\\x85\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// ownedRecord is a Pod of a Deployment's ReplicaSet as --tree prints it.
func ownedRecord() *Record {
	return &Record{
		Type: "Added", Time: t0(), APIVersion: "v1", Kind: "Pod", Resource: "pods",
		Namespace: "demo", Name: "web-5f57bf4468-x2x9z", UID: "u-pod", ResourceVersion: "7",
		Owners: []Owner{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u-deploy"},
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5f57bf4468", UID: "u-rs"},
		},
		Manager: "kube-scheduler", Operation: "Update",
		Object: object(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-5f57bf4468-x2x9z"}}`),
	}
}

func TestOwnersText(t *testing.T) {
	o := testOptions("text")
	o.MultiType, o.ShowManager = true, true
	got := printAll(t, o, []*Record{ownedRecord()})
	want := "Added: pod web-5f57bf4468-x2x9z (deployment.apps web → replicaset.apps web-5f57bf4468) by kube-scheduler\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestOwnersJSON(t *testing.T) {
	r := ownedRecord()
	line := strings.TrimSuffix(printAll(t, testOptions("json"), []*Record{r}), "\n")
	if keys, want := jsonKeys(t, line), wantKeys(r); strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	var got struct {
		Owners []map[string]string `json:"owners"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u-deploy"},
		{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5f57bf4468", "uid": "u-rs"},
	}
	if !reflect.DeepEqual(got.Owners, want) {
		t.Errorf("owners = %v, want %v", got.Owners, want)
	}
	r.Owners = nil
	if line := printAll(t, testOptions("json"), []*Record{r}); strings.Contains(line, `"owners"`) {
		t.Errorf("a record without owners has an owners key: %s", line)
	}
}

// TestContextColumn: with several clusters, text, name and wide lead with
// the context, padded to the longest name; JSON has the context field.
func TestContextColumn(t *testing.T) {
	records := []*Record{
		{Type: "Added", Time: t0(), Context: "prod", APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "tmp", Name: "demo", ResourceVersion: "1"},
		{Type: "Updated", Time: t0(), Context: "staging", APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "tmp", Name: "demo", ResourceVersion: "2"},
	}
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"prod    Added: demo", "staging Updated: demo"}},
		{"name", []string{"prod    configmap/demo", "staging configmap/demo"}},
		{"wide", []string{"CONTEXT", "prod", "staging"}},
	} {
		o := testOptions(tc.format)
		o.ContextWidth = len("staging")
		lines := strings.Split(strings.TrimSuffix(printAll(t, o, records), "\n"), "\n")
		if tc.format == "wide" {
			for i, want := range tc.want {
				if fields := strings.Fields(lines[i]); len(fields) == 0 || fields[0] != want {
					t.Errorf("wide line %d = %q, want it to start with %s", i, lines[i], want)
				}
			}
			continue
		}
		if !slices.Equal(lines, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.format, lines, tc.want)
		}
	}
	line := strings.TrimSuffix(printAll(t, testOptions("json"), records[:1]), "\n")
	if keys, want := jsonKeys(t, line), wantKeys(records[0]); strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	if !strings.Contains(line, `"context":"prod"`) {
		t.Errorf("no context in %s", line)
	}
}

func TestTextCoalescedOne(t *testing.T) {
	r := &Record{Type: "Updated", Namespace: "tmp", Name: "demo", Coalesced: 1}
	if got, want := printAll(t, testOptions("text"), []*Record{r}), "Updated: demo (coalesced 1 update)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWideWidthsOnlyGrow checks that a long cell widens its column for the
// rows after it, that a short cell never narrows it back, and that the
// widening row gets the header again above it, aligned with it.
func TestWideWidthsOnlyGrow(t *testing.T) {
	long := strings.Repeat("x", 40)
	records := []*Record{
		{Type: "Added", Time: t0(), Kind: "ConfigMap", Namespace: "tmp", Name: "a", ResourceVersion: "1"},
		{Type: "Added", Time: t0(), Kind: "ConfigMap", Namespace: "tmp", Name: long, ResourceVersion: "2"},
		{Type: "Added", Time: t0(), Kind: "ConfigMap", Namespace: "tmp", Name: "b", ResourceVersion: "3"},
	}
	out := printAll(t, testOptions("wide"), records)
	lines := strings.Split(out, "\n")
	// header, a, header, long, b
	rvAt := func(line, rv string) int { return strings.Index(line, "   "+rv+"   ") }
	a, l, b := rvAt(lines[1], "1"), rvAt(lines[3], "2"), rvAt(lines[4], "3")
	if a < 0 || l <= a || b != l {
		t.Errorf("RESOURCEVERSION starts at %d, %d, %d; want the 2nd to move right and the 3rd to stay with it:\n%s", a, l, b, out)
	}
	for _, h := range []struct{ header, row int }{{0, a}, {2, l}} {
		if at := strings.Index(lines[h.header], "RESOURCEVERSION"); at != h.row+3 {
			t.Errorf("line %d: header RESOURCEVERSION at %d, the row under it at %d:\n%s", h.header+1, at, h.row+3, out)
		}
	}
}

// TestTablesLayOutAnInitialListAsOneTable: wide (generic columns and a
// kind's, with -A), and custom-columns, hold the rows of an initial list
// back until Release, then print them under one header, as wide as their
// widest cells, as kubectl get prints a list; a later row that widens a
// column gets the header again. A record that is not held releases what
// is, in order, before itself.
func TestTablesLayOutAnInitialListAsOneTable(t *testing.T) {
	podCols := []Column{{Name: "Name", Format: "name"}, {Name: "Status"}}
	initial := func(r *Record) *Record { r.Initial, r.Type = true, "Replaced"; return r }
	generic := func(ns, name string) *Record {
		return &Record{Type: "Added", Time: t0(), Kind: "ConfigMap", APIVersion: "v1", Namespace: ns, Name: name, ResourceVersion: "7"}
	}
	pod := func(ns, name string) *Record {
		r := rowRecord("Added", "v1", "Pod", name, podCols, `["`+name+`","Running"]`)
		r.Namespace = ns
		return r
	}
	long, longer := "a-name-much-longer-than-twenty", "a-name-much-longer-than-twenty-and-more"
	for _, tc := range []struct {
		name, format string
		make         func(ns, name string) *Record
	}{
		{"generic", "wide", generic},
		{"a kind's", "wide", pod},
		{"custom-columns", "custom-columns=TYPE:.type,NAMESPACE:.namespace,NAME:.name,RV:.resourceVersion", generic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(tc.format)
			o.AllNamespaces = true
			records := []*Record{
				initial(tc.make("a", "x")), initial(tc.make("cert-manager-production", long)), initial(tc.make("b", "y")),
				tc.make("b", "z"), tc.make("b", longer),
			}
			p, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			for _, r := range records[:3] {
				if err := p.Print(&out, r); err != nil {
					t.Fatal(err)
				}
			}
			if out.Len() != 0 {
				t.Fatalf("the initial list printed before its end:\n%s", out.String())
			}
			if err := p.Print(&out, records[3]); err != nil { // releases the list first
				t.Fatal(err)
			}
			if err := p.(Releaser).Release(&out); err != nil {
				t.Fatal(err)
			}
			if err := p.Print(&out, records[4]); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			headerAt := []int{0, 5}
			if len(lines) != 7 || !isHeader(lines[0]) || !isHeader(lines[5]) {
				t.Fatalf("want a header, the list's 3 rows, the next row, a header and the widening row; got\n%s", out.String())
			}
			for i, h := range headerAt {
				end := len(lines)
				if i+1 < len(headerAt) {
					end = headerAt[i+1]
				}
				for _, row := range lines[h+1 : end] {
					if !alignedUnder(lines[h], row) {
						t.Errorf("row not aligned with its header:\n%s\n%s\nin\n%s", lines[h], row, out.String())
					}
				}
			}
			for i, want := range []string{"x", long, "y", "z", longer} {
				row := lines[[]int{1, 2, 3, 4, 6}[i]]
				if !strings.Contains(row, "   "+want+"   ") {
					t.Errorf("row %d is %q, want %s's", i, row, want)
				}
			}
		})
	}

	// A list longer than maxHeldRows is laid out in parts that long.
	p, err := New(testOptions("wide"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for i := range maxHeldRows + 1 {
		if err := p.Print(&out, initial(generic("a", fmt.Sprint("n-", i)))); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(out.String(), "\n"); n != maxHeldRows+1 {
		t.Errorf("%d lines printed after %d rows of a list, want the first %d and their header", n, maxHeldRows+1, maxHeldRows)
	}
	if err := p.(Releaser).Release(&out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != maxHeldRows+2 {
		t.Errorf("%d lines printed after the release of the rest, want %d", n, maxHeldRows+2)
	}
}

// isHeader reports whether a table line is a header: its first cell is
// a column name.
func isHeader(line string) bool {
	f := strings.Fields(line)
	return len(f) > 0 && (f[0] == "TIME" || f[0] == "TYPE")
}

// alignedUnder reports whether every column of row starts where its
// header's does: at each start of a header cell, the row has a cell that
// starts there.
func alignedUnder(header, row string) bool {
	for i := range header {
		start := header[i] != ' ' && (i == 0 || header[i-1] == ' ')
		if !start {
			continue
		}
		if i >= len(row) || row[i] == ' ' || i > 0 && row[i-1] != ' ' {
			return false
		}
	}
	return true
}

// TestCustomColumnsAligned: the header of custom-columns is as wide as
// the first row under it, and comes again above a row that widens a
// column; --no-headers lets the columns grow.
func TestCustomColumnsAligned(t *testing.T) {
	records := []*Record{
		{Type: "Replaced", Namespace: "demo", Name: "kube-root-ca.crt"},
		{Type: "Added", Namespace: "demo", Name: "a"},
		{Type: "Added", Namespace: "demo", Name: "a-much-longer-name-than-before"},
		{Type: "Deleted", Namespace: "demo", Name: "b"},
	}
	o := testOptions("custom-columns=TYPE:.type,NAME:.name,NS:.namespace")
	want := strings.Join([]string{
		"TYPE       NAME               NS",
		"Replaced   kube-root-ca.crt   demo",
		"Added      a                  demo",
		"TYPE       NAME                             NS",
		"Added      a-much-longer-name-than-before   demo",
		"Deleted    b                                demo",
	}, "\n") + "\n"
	if got := printAll(t, o, records); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	o.NoHeaders = true
	want = strings.Join([]string{
		"Replaced   kube-root-ca.crt   demo",
		"Added      a                  demo",
		"Added      a-much-longer-name-than-before   demo",
		"Deleted    b                                demo",
	}, "\n") + "\n"
	if got := printAll(t, o, records); got != want {
		t.Errorf("--no-headers: got\n%s\nwant\n%s", got, want)
	}
}

func TestTemplateFuncs(t *testing.T) {
	r := &Record{Type: "Added", Name: "demo", Object: object(`{"data":{"k":"aGVsbG8="},"list":[1,null],"f":1.5,"big":12345678901234567890}`)}
	tests := []struct {
		name, tmpl, want string
	}{
		{"base64decode", `{{.object.data.k | base64decode}}`, "hello"},
		{"exists", `{{exists .object "data" "k"}} {{exists .object "data" "x"}} {{exists .object "list" 0}} {{exists .object "list" 1}} {{exists .object "list" 2}}`, "true false true false false"},
		{"missing key", `{{.object.nope}}`, "<no value>"},
		{"integers", `{{index .object.list 0}} {{printf "%T" (index .object.list 0)}}`, "1 int64"},
		{"floats", `{{.object.f}} {{printf "%T %T" .object.f .object.big}}`, "1.5 float64 float64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := printAll(t, testOptions("go-template="+tt.tmpl), []*Record{r}); got != tt.want {
				t.Errorf("go-template %s printed %q, want %q", tt.tmpl, got, tt.want)
			}
		})
	}
}

func TestTemplateExecutionErrors(t *testing.T) {
	r := &Record{Type: "Added", Name: "demo", Object: object(`{"data":{"k":"not base64!"}}`)}
	tests := []struct {
		format, want string
	}{
		{`go-template={{.object.data.k | base64decode}}`, `cannot execute the --output=go-template template on the Added record of demo: template: output:1:19: executing "output" at <base64decode>: error calling base64decode: base64 decode failed: illegal base64 data at input byte 3`},
		{`jsonpath={.type[0]}`, `cannot execute the --output=jsonpath template "{.type[0]}" on the Added record of demo: string is not array or slice`},
	}
	for _, tt := range tests {
		p, err := New(Options{Format: tt.format})
		if err != nil {
			t.Fatalf("New(%q): %v", tt.format, err)
		}
		var out bytes.Buffer
		err = p.Print(&out, r)
		switch prefix, partial := strings.CutSuffix(tt.want, "…"); {
		case err == nil:
			t.Errorf("-o %s printed %q, want error %q", tt.format, out.String(), tt.want)
		case partial && !strings.HasPrefix(err.Error(), prefix), !partial && err.Error() != tt.want:
			t.Errorf("-o %s error =\n%q\nwant\n%q", tt.format, err, tt.want)
		}
		if out.Len() != 0 {
			t.Errorf("-o %s wrote %q before failing, want nothing", tt.format, out.String())
		}
	}
}

// TestPrintAllocs keeps the hot path allocation-free: JSON and text lines
// of records without a diff.
func TestPrintAllocs(t *testing.T) {
	r := testRecords()[1]
	for _, format := range []string{"json", "text", "name"} {
		o := testOptions(format)
		o.Timestamps, o.MultiType, o.ShowManager = true, true, true
		p, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = p.Print(io.Discard, r) }); n != 0 {
			t.Errorf("-o %s: %v allocations per record, want 0", format, n)
		}
	}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf = AppendJSON(buf[:0], r) }); n != 0 {
		t.Errorf("AppendJSON: %v allocations per record, want 0", n)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	r := testRecords()[1]
	b.ReportAllocs()
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		buf = AppendJSON(buf[:0], r)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkAppendJSONWithChanges(b *testing.B) {
	r := testRecords()[2]
	b.ReportAllocs()
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		buf = AppendJSON(buf[:0], r)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkText(b *testing.B) {
	r := testRecords()[1]
	p, err := New(Options{Format: "text", Timestamps: true, MultiType: true, AllNamespaces: true, Color: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Print(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTextWithChanges(b *testing.B) {
	r := testRecords()[2]
	p, err := New(Options{Format: "text"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Print(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEventText(t *testing.T) {
	r := &Record{
		Type: "Updated", APIVersion: "events.k8s.io/v1", Kind: "Event", Namespace: "demo", Name: "web-x.17f",
		Event: &Event{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "demo", Name: "web-5f57bf4468",
			Type: "Warning", Reason: "FailedCreate", Message: "quota\x1b]0;owned\x07 exceeded", Count: 3,
		},
		Object: object(`{"kind":"Event"}`),
	}
	o := testOptions("text")
	got := printAll(t, o, []*Record{r})
	want := "Event: replicaset.apps web-5f57bf4468 Warning FailedCreate: quota\\x1b]0;owned\\x07 exceeded (3 times)\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	o.AllNamespaces = true
	r.Event.Count = 1
	got = printAll(t, o, []*Record{r})
	want = "Event: replicaset.apps demo/web-5f57bf4468 Warning FailedCreate: quota\\x1b]0;owned\\x07 exceeded\n"
	if got != want {
		t.Errorf("-A: got %q, want %q", got, want)
	}
	// JSON keeps the text exact, in the object, and adds no field.
	line := strings.TrimSuffix(printAll(t, testOptions("json"), []*Record{r}), "\n")
	if keys, want := jsonKeys(t, line), wantKeys(r); strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("keys = %v, want %v", keys, want)
	}
}

func TestWideHealth(t *testing.T) {
	o := testOptions("wide")
	o.Health, o.Diff = true, true
	records := testRecords()[:2]
	records[0].Health = &Health{Status: "InProgress", Message: "Ready: 1/3"}
	records[1].Health = nil // an Event record has none
	lines := strings.Split(strings.TrimSuffix(printAll(t, o, records), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines %q", lines)
	}
	header := strings.Fields(lines[0])
	if got := strings.Join(header[len(header)-3:], " "); got != "AGE HEALTH CHANGES" {
		t.Errorf("header %q", lines[0])
	}
	for i, want := range []string{"InProgress", "<none>"} {
		f := strings.Fields(lines[i+1])
		if len(f) != len(header) || f[len(f)-2] != want {
			t.Errorf("row %q: want HEALTH %s", lines[i+1], want)
		}
	}
}

// The generic columns' header is as wide as the first row under it: a
// long kind (an aggregated API's) does not push its row out of line.
func TestWideGenericHeaderFitsItsRow(t *testing.T) {
	rec := &Record{
		Type: "Replaced", Time: t0(), APIVersion: "fake.example.com/v1", Kind: "Widget", Resource: "widgets",
		Namespace: "default", Name: "w1", ResourceVersion: "101", Object: object(`{"kind":"Widget"}`),
	}
	lines := strings.Split(strings.TrimSuffix(printAll(t, testOptions("wide"), []*Record{rec}), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines %q", lines)
	}
	for _, col := range []struct{ header, value string }{{"NAMESPACE", "default"}, {"NAME", "w1"}, {"RESOURCEVERSION", "101"}} {
		if h, v := strings.Index(lines[0], " "+col.header+" ")+1, strings.Index(lines[1], " "+col.value+" ")+1; h == 0 || h != v {
			t.Errorf("%s at %d, its value at %d:\n%s", col.header, h, v, strings.Join(lines, "\n"))
		}
	}
}

// rowRecord is a record with its kind's server-side Table row.
func rowRecord(typ, apiVersion, kind, name string, cols []Column, cells string) *Record {
	return &Record{
		Type: typ, Time: t0(), APIVersion: apiVersion, Kind: kind, Namespace: "demo", Name: name,
		Row: &Row{Columns: cols, Cells: json.RawMessage(cells)}, Object: object(`{"kind":"` + kind + `"}`),
	}
}

// TestWideRows: records with a Table row print their kind's columns under
// their kind's header, as wide as the rows; a header comes again when the
// kind changes and its last header is more than headerEvery lines up;
// several kinds name theirs in the name column; -A adds NAMESPACE; cells
// are escaped, null is <none>.
func TestWideRows(t *testing.T) {
	podCols := []Column{{Name: "Name", Format: "name"}, {Name: "Ready"}, {Name: "Status"}, {Name: "Node", Priority: 1}}
	deployCols := []Column{{Name: "Name", Format: "name"}, {Name: "Up-to-date"}}
	o := testOptions("wide")
	o.MultiType, o.Health = true, true
	records := []*Record{
		rowRecord("Added", "v1", "Pod", "web-1", podCols, `["web-1","0/1","Pending",null]`),
		rowRecord("Updated", "v1", "Pod", "web-1", podCols, `["web-1","1/1","Running","node-0"]`),
		rowRecord("Updated", "apps/v1", "Deployment", "web", deployCols, `["web",1]`),
		rowRecord("Updated", "v1", "Pod", "web-2", podCols, `["web-2","0/1","Pending \u001b[2J",null]`),
	}
	records[1].Health = &Health{Status: "Current"}
	got := strings.Split(strings.TrimSuffix(printAll(t, o, records), "\n"), "\n")
	want := []string{
		"TIME       DELTA      NAME        READY   STATUS    NODE     HEALTH",
		"21:48:40   Added      pod/web-1   0/1     Pending   <none>   <none>",
		"21:48:40   Updated    pod/web-1   1/1     Running   node-0   Current",
		"TIME       DELTA      NAME                  UP-TO-DATE   HEALTH",
		"21:48:40   Updated    deployment.apps/web   1            <none>",
		// A row that widens a column gets its header again.
		"TIME       DELTA      NAME        READY   STATUS            NODE     HEALTH",
		`21:48:40   Updated    pod/web-2   0/1     Pending \x1b[2J   <none>   <none>`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Past headerEvery lines, a kind's header comes again.
	var many []*Record
	for i := 0; i <= headerEvery; i++ {
		many = append(many, rowRecord("Updated", "apps/v1", "Deployment", "web", deployCols, `["web",1]`))
	}
	many = append(many, records[0])
	lines := strings.Split(strings.TrimSuffix(printAll(t, o, append([]*Record{records[0]}, many...)), "\n"), "\n")
	if n := strings.Count(strings.Join(lines, "\n"), "TIME       DELTA      NAME        READY"); n != 2 {
		t.Errorf("pod header %d times, want 2:\n%s", n, strings.Join(lines, "\n"))
	}

	// -A: NAMESPACE; --no-headers: none.
	o.AllNamespaces, o.NoHeaders = true, true
	got = strings.Split(strings.TrimSuffix(printAll(t, o, records[:1]), "\n"), "\n")
	if len(got) != 1 || !strings.HasPrefix(got[0], "21:48:40   Added      demo          pod/web-1") {
		t.Errorf("-A --no-headers: %q", got)
	}
}

// rowCellsSlow is rowCells without the scanner: encoding/json only.
func rowCellsSlow(raw json.RawMessage, n int) []string {
	out := make([]string, n)
	decodeCells(raw, out)
	return out
}

// The scanner of a row's cells reads what encoding/json reads, and leaves
// what it does not handle to it.
func TestRowCells(t *testing.T) {
	cases := []struct {
		raw  string
		want []string
	}{
		{`["web-1","1/1","Running",0,"3m"]`, []string{"web-1", "1/1", "Running", "0", "3m"}},
		{` [ "a" , -1.5e3 , true , false , null ] `, []string{"a", "-1.5e3", "true", "false", "<none>"}},
		{`["héllo ✓","x"]`, []string{"héllo ✓", "x"}},
		{`["esc\u001b[31mred","q\"uote"]`, []string{`esc\x1b[31mred`, `q"uote`}},
		{"[\"raw\x1bctl\"]", []string{""}}, // a control character in a string: not JSON
		{`[{"a":1},["b"]]`, []string{`{"a":1}`, `["b"]`}},
		{`["only"]`, []string{"only", ""}},
		{`["a","b","c"]`, []string{"a", "b"}},
		{`[]`, []string{"", ""}},
		{`[1,`, []string{"", ""}},
		{`[tru]`, []string{"", ""}},
		{`[01]`, []string{"", ""}},
		{`["a"] x`, []string{"", ""}},
		{`null`, []string{"", ""}},
		{``, []string{"", ""}},
	}
	for _, c := range cases {
		got := rowCells(json.RawMessage(c.raw), len(c.want))
		if !slices.Equal(got, c.want) {
			t.Errorf("rowCells(%q) = %q, want %q", c.raw, got, c.want)
		}
		if slow := rowCellsSlow(json.RawMessage(c.raw), len(c.want)); !slices.Equal(got, slow) {
			t.Errorf("rowCells(%q) = %q, encoding/json reads %q", c.raw, got, slow)
		}
	}
}

func BenchmarkRowCells(b *testing.B) {
	raw := json.RawMessage(`["web-7665494998-p5cws","1/1","Running",0,"12m","10.244.1.17","kwok-node-3","<none>","<none>"]`)
	b.ReportAllocs()
	for b.Loop() {
		rowCells(raw, 9)
	}
}

// FuzzRowCells: whatever the bytes, the scanner and encoding/json agree.
func FuzzRowCells(f *testing.F) {
	for _, seed := range []string{`["a",1,true,null]`, `[{"a":1}]`, `["\u001b"]`, `[-0.5e+3,"x"]`, `[]`, `[1,]`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := rowCells(json.RawMessage(raw), 4)
		if want := rowCellsSlow(json.RawMessage(raw), 4); !slices.Equal(got, want) {
			t.Errorf("rowCells(%q) = %q, encoding/json reads %q", raw, got, want)
		}
	})
}

// TestWideEventsAreLinesAboutTheirSubject: an Event record in -o wide is
// a line about its subject, its TIME and DELTA in the columns of the rows
// around it, not a row of the Event table under their header.
func TestWideEventsAreLinesAboutTheirSubject(t *testing.T) {
	o := testOptions("wide")
	records := testRecords()[:1]
	ev := *records[0]
	ev.Kind, ev.APIVersion, ev.Name = "Event", "events.k8s.io/v1", "web-1.18eb"
	ev.Event = &Event{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-1", Type: "Warning", Reason: "FailedScheduling", Message: "0/4 nodes \x1b[31mare available", Count: 3}
	records = append(records, &ev)
	lines := strings.Split(strings.TrimSuffix(printAll(t, o, records), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") {
		t.Fatalf("lines %q: want a header, a row, the Event's line", lines)
	}
	header, event := lines[0], lines[2]
	if i := strings.Index(header, "DELTA"); i < 0 || strings.Index(event, "Event") != i {
		t.Errorf("the Event's line does not align with the DELTA column:\n%s\n%s", header, event)
	}
	if want := `Event   pod/web-1 Warning FailedScheduling: 0/4 nodes \x1b[31mare available (3 times)`; !strings.Contains(strings.Join(strings.Fields(event)[1:], " "), strings.Join(strings.Fields(want), " ")) {
		t.Errorf("the Event's line %q, want %q after its time", event, want)
	}
	if strings.Contains(event, "events.k8s.io") || strings.Contains(event, "web-1.18eb") {
		t.Errorf("the Event's line names the Event, not its subject: %q", event)
	}
	// Across namespaces: the type, then namespace/name, as text says it.
	o.AllNamespaces = true
	lines = strings.Split(strings.TrimSuffix(printAll(t, o, records), "\n"), "\n")
	if event := lines[len(lines)-1]; !strings.Contains(event, " pod demo/web-1 Warning FailedScheduling") || strings.Contains(event, "pod/demo/web-1") {
		t.Errorf("the Event's line across namespaces: %q, want pod demo/web-1", event)
	}
}

// TestQueueSummary: the summary counts every handler call, and those
// that queued nothing apart, in JSON always and in text when there are.
func TestQueueSummary(t *testing.T) {
	s := QueueSummary{Time: t0(), Calls: 57, NotQueued: 16, Reconciles: 12, Coalesced: 29, LongestQueue: 3, WaitP50: time.Millisecond, WaitP99: 2 * time.Millisecond}
	want := `{"type":"QueueSummary","time":"2026-11-21T20:48:40.123456Z","calls":57,"notQueued":16,"reconciles":12,"coalesced":29,"pending":0,"longestQueue":3,"waitP50Seconds":0.001,"waitP99Seconds":0.002}`
	if got := string(AppendQueueSummaryJSON(nil, &s)); got != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
	for _, tc := range []struct {
		notQueued int
		want      string
	}{
		{16, "QueueSummary: 57 handler calls (16 queued nothing), 12 reconciles (29 coalesced), longest queue 3, wait p50 1ms, p99 2ms\n"},
		{0, "QueueSummary: 57 handler calls, 12 reconciles (29 coalesced), longest queue 3, wait p50 1ms, p99 2ms\n"},
	} {
		s.NotQueued = tc.notQueued
		var b bytes.Buffer
		if err := (&textPrinter{}).PrintQueueSummary(&b, &s); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("text:\n got %q\nwant %q", b.String(), tc.want)
		}
	}
}
