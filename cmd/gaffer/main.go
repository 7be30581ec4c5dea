package main

import (
	"context"
	"github.com/gaffer-dev/gaffer/profile"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/cli"
)

// version, when set at build time (-ldflags "-X main.version=…"), names
// the version instead of the module's; see versionOf.
var version string

func main() {
	agent.SandboxMain() // as the sandbox helper, it never returns
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bi, ok := debug.ReadBuildInfo()
	err := cli.NewWithIO(versionOf(version, bi, ok), cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Keys: profile.NewKeyVault()}).RunContext(ctx, os.Args)
	cli.Report(os.Stderr, err)
	return cli.ExitCode(err)
}
