package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultHost is the host Listen binds to when the address names none.
const DefaultHost = "127.0.0.1"

// Handler serves /metrics from g, /healthz (200 while the process runs) and
// /readyz (200 when ready returns nil, 503 with its error otherwise; a nil
// ready is always ready).
func Handler(g prometheus.Gatherer, ready func() error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ready != nil {
			if err := ready(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintln(w, err)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// ListenAddr completes addr with DefaultHost when it names no host: "9090"
// and ":9090" become "127.0.0.1:9090"; "0.0.0.0:9090" or "[::]:9090" are
// kept, as a deliberate choice to listen on every interface.
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "", fmt.Errorf("%w: empty", ErrAddr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// A bare port.
		host, port = "", addr
	}
	if port == "" {
		return "", fmt.Errorf("%w: %q has no port", ErrAddr, addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrAddr, addr, err)
	}
	if host == "" {
		host = DefaultHost
	}
	return net.JoinHostPort(host, port), nil
}

// Listen opens a TCP listener on addr, completed by ListenAddr.
func Listen(addr string) (net.Listener, error) {
	a, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", a, err)
	}
	return ln, nil
}

// Serve serves h on ln until ctx is done, then shuts the server down,
// waiting up to five seconds for requests in flight. It returns nil after a
// shutdown caused by ctx.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("metrics: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: serve: %w", err)
	}
	return nil
}
