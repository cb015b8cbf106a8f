package targets

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		args    []string
		want    []Arg
		wantErr string
	}{
		{[]string{"cm"}, []Arg{{Type: "cm"}}, ""},
		{[]string{"cm,secrets"}, []Arg{{Type: "cm"}, {Type: "secrets"}}, ""},
		{[]string{"cm", "a", "b"}, []Arg{{Type: "cm", Name: "a"}, {Type: "cm", Name: "b"}}, ""},
		{[]string{"cm/a", "deploy.apps/b"}, []Arg{{Type: "cm", Name: "a"}, {Type: "deploy.apps", Name: "b"}}, ""},
		{[]string{"cm", "cm/a"}, nil, "there is no need to specify a resource type as a separate argument"},
		{[]string{"cm/"}, nil, "must have a single resource and name"},
		{[]string{"cm/a/b"}, nil, "must have a single resource and name"},
		{[]string{"cm,,x"}, nil, "empty type"},
		{nil, nil, "no resource type"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := ParseArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
