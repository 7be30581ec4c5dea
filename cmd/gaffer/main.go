// Command gaffer runs durable coding-agent workflows. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gaffer-dev/gaffer/cli"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, version, os.Args, cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
