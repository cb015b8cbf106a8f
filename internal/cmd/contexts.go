package cmd

import (
	"fmt"
	"slices"
	"strings"
)

// contextList is the value of --context: one context, or several, given
// comma-separated or by repeating the flag. The first one is also set in
// ConfigFlags.Context, so that a single context works as in kubectl.
type contextList struct {
	names  *[]string
	single *string
}

func (c *contextList) String() string { return strings.Join(*c.names, ",") }

func (c *contextList) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name == "" {
			return fmt.Errorf("invalid --context %q: empty context name", v)
		}
		if !slices.Contains(*c.names, name) {
			*c.names = append(*c.names, name)
		}
	}
	*c.single = (*c.names)[0]
	return nil
}

func (c *contextList) Type() string { return "strings" }

// contextWidth is the width of the context column of human output: the
// longest name, 0 for one cluster.
func contextWidth(names []string) int {
	w := 0
	for _, n := range names {
		w = max(w, len(n))
	}
	return w
}
