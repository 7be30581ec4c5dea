package main

import (
	"context"
	"github.com/gaffer-dev/gaffer/profile"
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
	err := cli.NewWithIO(version, cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Keys: profile.NewKeyVault()}).RunContext(ctx, os.Args)
	cli.Report(os.Stderr, err)
	return cli.ExitCode(err)
}
