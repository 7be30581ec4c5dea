package metrics

import "errors"

// ErrAddr is returned by Listen for an address it cannot use.
var ErrAddr = errors.New("metrics: bad listen address")
