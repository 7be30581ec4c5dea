package cli

import (
	"errors"

	"github.com/gaffer-dev/gaffer/inbox"
	"github.com/gaffer-dev/gaffer/metrics"
)

// inboxFlags checks --ui-addr and --ui-token-file for the daemon's inbox
// (daemon.Config.InboxAddr and InboxToken), before the host opens: an
// address without a host is 127.0.0.1, one that is not loopback needs a
// token. The address is "" without --ui-addr.
func inboxFlags(o ServeOptions) (addr, token string, err error) {
	if o.UIAddr == "" {
		if o.UITokenFile != "" {
			return "", "", usageErrorf("--ui-token-file needs --ui-addr")
		}
		return "", "", nil
	}
	if addr, err = metrics.ListenAddr(o.UIAddr); err != nil {
		return "", "", exitf(ExitUsage, "--ui-addr: %w", err)
	}
	if o.UITokenFile != "" {
		token, err = inbox.ReadToken(o.UITokenFile)
		if errors.Is(err, inbox.ErrNotOneToken) {
			return "", "", exitf(ExitPrecondition, "--ui-token-file %s: want one token on one line (make one with: openssl rand -hex 32 > %s)", o.UITokenFile, o.UITokenFile)
		}
		if err != nil {
			return "", "", exitf(ExitPrecondition, "--ui-token-file: %w", err)
		}
	} else if !inbox.Loopback(addr) {
		return "", "", exitf(ExitPrecondition, "--ui-addr %s is not a loopback address and the inbox would answer anyone: pass --ui-token-file FILE (a bearer token) or --ui-addr 127.0.0.1:PORT", o.UIAddr)
	}
	return addr, token, nil
}
