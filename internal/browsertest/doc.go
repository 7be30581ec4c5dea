// Package browsertest starts a real headless Chromium for tests that
// drive gaffer's web pages over the DevTools protocol (chromedp): it finds
// the browser, starts it with the flags a container needs, and skips the
// test where there is none or it cannot start.
package browsertest
