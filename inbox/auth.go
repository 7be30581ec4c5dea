package inbox

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
)

// sessionCookie holds a session: a random nonce and its HMAC under the
// server's key, so that only the server makes one.
const sessionCookie = "gaffer_session"

// csrfField is the form field of the CSRF token.
const csrfField = "csrf"

// bearerSession is the session of a request authenticated by its bearer
// token (no cookie): its CSRF token is the HMAC of this name.
const bearerSession = "bearer"

type sessionKey struct{}

// authed wraps h with the inbox's authentication: with a token, a request
// needs it (Authorization: Bearer, or the session cookie a "?token="
// login sets); without one, it must name a loopback host, and it gets a
// session cookie if it has none. A POST needs its session's CSRF token.
func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		session, ok := s.session(r)
		switch {
		case s.cfg.Token == "" && !loopbackHost(r.Host):
			s.fail(w, r, http.StatusForbidden, "this inbox answers only requests to 127.0.0.1 or localhost; serve it with --ui-token-file to reach it from elsewhere")
			return
		case ok:
		case s.cfg.Token != "" && r.Method == http.MethodGet && r.URL.Query().Has("token"):
			if !equal(r.URL.Query().Get("token"), s.cfg.Token) {
				s.fail(w, r, http.StatusUnauthorized, "wrong token: open the inbox's address with ?token= and the content of its --ui-token-file")
				return
			}
			s.setSession(w)
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		case s.cfg.Token != "":
			w.Header().Set("WWW-Authenticate", `Bearer realm="gaffer"`)
			s.fail(w, r, http.StatusUnauthorized, "a token is needed: open the inbox's address with ?token= and the content of its --ui-token-file, or send Authorization: Bearer")
			return
		default:
			session = s.setSession(w)
		}
		if r.Method == http.MethodPost && !equal(r.PostFormValue(csrfField), s.csrf(session)) {
			s.fail(w, r, http.StatusForbidden, "the form's CSRF token is missing or wrong: reload the page and send it again")
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, session)))
	}
}

// session returns the request's session: bearerSession for the right
// bearer token, the cookie's value for a cookie the server made.
func (s *Server) session(r *http.Request) (string, bool) {
	if s.cfg.Token != "" {
		if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(strings.TrimSpace(auth), s.cfg.Token) {
			return bearerSession, true
		}
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", false
	}
	nonce, mac, ok := strings.Cut(c.Value, ".")
	if !ok || !equal(mac, s.mac("session:"+nonce)) {
		return "", false
	}
	return c.Value, true
}

// setSession sets a new session cookie and returns its value.
func (s *Server) setSession(w http.ResponseWriter) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	nonce := hex.EncodeToString(b)
	v := nonce + "." + s.mac("session:"+nonce)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: v, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return v
}

// csrf is the CSRF token of session: its HMAC under the server's key.
func (s *Server) csrf(session string) string { return s.mac("csrf:" + session) }

// csrfOf is the CSRF token of the request's session.
func (s *Server) csrfOf(r *http.Request) string {
	session, _ := r.Context().Value(sessionKey{}).(string)
	return s.csrf(session)
}

func (s *Server) mac(msg string) string {
	m := hmac.New(sha256.New, s.cfg.Key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// equal compares secrets in constant time; an empty one is never equal.
func equal(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// loopbackHost reports whether a request's Host names this machine:
// localhost or a loopback address, with or without a port.
func loopbackHost(hostport string) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Loopback reports whether a listen address (host:port) binds only this
// machine's loopback interface; an empty host is not loopback (it binds
// every interface), "localhost" is.
func Loopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return false
	}
	return loopbackHost(h)
}

// Guard wraps h, a program's endpoint beside the inbox (gaffer mcp
// --http), with the inbox's checks: with a token, every request needs it
// as a bearer token; without one, a request must name a loopback host
// (no DNS rebinding reaches it).
func Guard(token string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case token == "" && !loopbackHost(r.Host):
			http.Error(w, "this server answers only requests to 127.0.0.1 or localhost", http.StatusForbidden)
		case token != "":
			auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || !equal(strings.TrimSpace(auth), token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="gaffer"`)
				http.Error(w, "a token is needed: send Authorization: Bearer and the content of the --token-file", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		default:
			h.ServeHTTP(w, r)
		}
	})
}
