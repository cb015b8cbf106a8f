package textsafe

import "testing"

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, é and ü", "plain text, é and ü"},
		{"red \x1b[31mtext\x1b[0m", `red \x1b[31mtext\x1b[0m`},
		{"bell\a, line\nbreak\r, tab\t, del\x7f", `bell\x07, line\nbreak\r, tab\t, del\x7f`},
		{"c1 \u009b31m csi", `c1 \x9b31m csi`},
		{"\u00a0 no-break space stays", "\u00a0 no-break space stays"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(Append([]byte("> "), tc.in)); got != "> "+tc.want {
			t.Errorf("Append(%q) = %q", tc.in, got)
		}
	}
}
