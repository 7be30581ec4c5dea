package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start starts a headless Chromium for t, with opts after the common
// flags, and returns a context of it that ends after three minutes or
// with the test. It skips t when no chromium is installed (Debian's
// chromium package) or when it cannot start here.
func Start(t *testing.T, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	chrome := "/usr/bin/chromium"
	if p, err := exec.LookPath("chromium"); err == nil {
		chrome = p
	} else if _, err := os.Stat(chrome); err != nil {
		t.Skipf("no chromium to drive (install Debian's chromium package): %v", err)
	}
	all := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(chrome), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true)}, opts...)
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), all...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// The first call starts the browser, on a context without a timeout
	// (a timeout would stop the browser with it).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Skipf("chromium cannot start here: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelT)
	return ctx
}
