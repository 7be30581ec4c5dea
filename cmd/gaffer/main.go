// Command gaffer plans, runs and reviews coding-agent work in phases,
// durably. See the cli package for the commands and exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gaffer-dev/gaffer/cli"
)

// version is set at build time: -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := cli.New(version, os.Stdout, os.Stderr).RunContext(ctx, os.Args)
	cli.Report(os.Stderr, err)
	return cli.ExitCode(err)
}
