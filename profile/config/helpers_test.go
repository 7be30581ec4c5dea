package config

import (
	"errors"
	"testing"
)

// effective parses the gaffer.yaml src and returns its profile name
// ("": the file's default), failing the test on an error.
func effective(t *testing.T, src, name string) Profile {
	t.Helper()
	c, err := Parse("gaffer.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Effective(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// refusal is a gaffer.yaml that Parse refuses, and the one-line error it
// must give, to the letter.
type refusal struct{ name, yaml, want string }

// checkRefusals parses each case's file and wants no configuration, and
// the case's error, an ErrInvalid.
func checkRefusals(t *testing.T, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse("gaffer.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Fatalf("Parse error = %v\nwant %s", err, c.want)
			}
			if cfg != nil || !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse = %v, %v; want no config and an invalid one", cfg, err)
			}
		})
	}
}
