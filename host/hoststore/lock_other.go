//go:build !unix

package hoststore

func flock(uintptr) error { return nil }
