package inbox

import (
	"errors"
	"strings"

	"github.com/gaffer-dev/gaffer/internal/inputfile"
)

// ErrNotOneToken is a token file that holds no token, or more than one
// line or word.
var ErrNotOneToken = errors.New("inbox: want one token on one line")

// ReadToken reads the bearer token Guard and the inbox check from the
// file at path (a regular file of at most 64 KiB, or a pipe): one token
// on one line, surrounding white space dropped. A file that holds
// anything else is ErrNotOneToken; one that cannot be read is
// inputfile.Read's error.
func ReadToken(path string) (string, error) {
	b, err := inputfile.Read(path, 64<<10, inputfile.Options{})
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(b))
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", ErrNotOneToken
	}
	return token, nil
}
