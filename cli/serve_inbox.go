package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/inbox"
	"github.com/gaffer-dev/gaffer/internal/inputfile"
	"github.com/gaffer-dev/gaffer/metrics"
)

// uiListener is serve's inbox listener and its token, before the host
// opens: a missing token or a busy port stops serve before it starts.
type uiListener struct {
	ln    net.Listener // nil without --ui-addr
	token string
}

// listenInbox checks --ui-addr and --ui-token-file and listens: an address
// without a host is 127.0.0.1, one that is not loopback needs a token.
func listenInbox(o ServeOptions) (uiListener, error) {
	if o.UIAddr == "" {
		if o.UITokenFile != "" {
			return uiListener{}, usageErrorf("--ui-token-file needs --ui-addr")
		}
		return uiListener{}, nil
	}
	addr, err := metrics.ListenAddr(o.UIAddr)
	if err != nil {
		return uiListener{}, exitf(ExitUsage, "--ui-addr: %w", err)
	}
	var ui uiListener
	if o.UITokenFile != "" {
		b, err := inputfile.Read(o.UITokenFile, 64<<10, inputfile.Options{})
		if err != nil {
			return uiListener{}, exitf(ExitPrecondition, "--ui-token-file: %w", err)
		}
		if ui.token = strings.TrimSpace(string(b)); ui.token == "" || strings.ContainsAny(ui.token, " \t\r\n") {
			return uiListener{}, exitf(ExitPrecondition, "--ui-token-file %s: want one token on one line (make one with: openssl rand -hex 32 > %s)", o.UITokenFile, o.UITokenFile)
		}
	} else if !inbox.Loopback(addr) {
		return uiListener{}, exitf(ExitPrecondition, "--ui-addr %s is not a loopback address and the inbox would answer anyone: pass --ui-token-file FILE (a bearer token) or --ui-addr 127.0.0.1:PORT", o.UIAddr)
	}
	ui.ln, err = net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return uiListener{}, exitf(ExitPrecondition, "listen %s: address already in use; pass --ui-addr 127.0.0.1:PORT", addr)
	} else if err != nil {
		return uiListener{}, exitf(ExitUsage, "--ui-addr: %w", err)
	}
	return ui, nil
}

// serve serves the inbox over svc until ctx ends (wg counts it); stop
// ends its event streams first. The URL is "" without --ui-addr.
func (ui uiListener) serve(ctx context.Context, wg *sync.WaitGroup, svc host.Service, h *host.Host, log *slog.Logger) (url string, stop func(), err error) {
	if ui.ln == nil {
		return "", func() {}, nil
	}
	ib, err := inbox.New(inbox.Config{Service: svc, Subscribe: h.Subscribe, Repo: h.Repo(),
		Transcripts: host.TranscriptDir(h.StoreDir()), Token: ui.token, Logger: log})
	if err != nil {
		return "", nil, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := metrics.Serve(ctx, ui.ln, ib); err != nil {
			log.Error("inbox listener stopped", "err", err)
		}
	}()
	return fmt.Sprintf("http://%s/", ui.ln.Addr()), ib.Close, nil
}
