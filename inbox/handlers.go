package inbox

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
)

// indexShown is how many runs that need no one the index shows, the
// newest (all of them with ?all=1): every run that needs a person is
// shown. With every run of a store of 10,000 the page was 9 MB.
const indexShown = 100

// indexPage is the list of runs.
type indexPage struct {
	Runs   []runItem
	Needs  int  // how many runs need a person
	Hidden int  // older runs left out (All shows them)
	All    bool // ?all=1: every run
}

func (s *Server) indexData(r *http.Request) (indexPage, error) {
	// Of 10,000 runs the page shows those that wait for a person (read
	// whole: the question is in the interrupt) and the newest others.
	es, err := s.cfg.Service.List(r.Context(), host.ListRequest{})
	if err != nil {
		return indexPage{}, err
	}
	p := indexPage{All: r.URL.Query().Get("all") == "1"}
	shown := make([]host.RunStatus, 0, min(len(es), indexShown))
	others := 0
	for i := range es {
		if es[i].Whole == nil || !waitsForAPerson(*es[i].Whole) {
			if others++; others > indexShown && !p.All {
				p.Hidden++
				continue
			}
		}
		shown = append(shown, es[i].RunStatus())
	}
	p.Runs = listOf(shown, s.cfg.Now())
	for _, it := range p.Runs {
		if it.Needs != "" {
			p.Needs++
		}
	}
	return p, nil
}

// waitsForAPerson reports whether rs waits on an answer (its plan's
// approval, recovery's question): what runview.Run.Asks says, without
// the view.
func waitsForAPerson(rs host.RunStatus) bool {
	return !rs.Pending && rs.Snapshot.Interrupt != nil && host.ViewStatus(rs.Snapshot) == state.RunAwaitingApproval
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	p, err := s.indexData(r)
	if err != nil {
		s.serviceError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "index.html", p)
}

func (s *Server) indexLive(w http.ResponseWriter, r *http.Request) {
	p, err := s.indexData(r)
	if err != nil {
		s.serviceError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "index-live", p)
}

// saids are what the run page says after an answer (?said=): a fixed
// set, so that no link can make the page say anything else.
var saids = map[string]string{
	"approved": "Approved: the run continues.",
	"rejected": "Rejected: the architect revises the plan with your feedback.",
	"retry":    "Retry: the run tries the phase again.",
	"stop":     "Stop: the run stops here.",
	"skip":     "Skip: the phase is skipped and the run goes on with the next one.",
}

func (s *Server) runData(r *http.Request) (runPage, error) {
	id := r.PathValue("id")
	rs, err := s.cfg.Service.Status(r.Context(), host.RunRequest{RunID: id})
	if err != nil {
		return runPage{}, err
	}
	if rs.Snapshot.RunID != id {
		return runPage{}, &host.Error{Code: host.Refused, Err: fmt.Errorf("no run %s", id)}
	}
	p := s.pageOf(r.Context(), rs)
	p.CSRF = s.csrfOf(r)
	if k := r.URL.Query().Get("said"); saids[k] != "" {
		p.Said, p.SaidKey = saids[k], k
	}
	return p, nil
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	p, err := s.runData(r)
	if err != nil {
		s.serviceError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "run.html", p)
}

func (s *Server) runLive(w http.ResponseWriter, r *http.Request) {
	p, err := s.runData(r)
	if err != nil {
		s.serviceError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "run-live", p)
}

// answer answers a run through the Service's Answer: the same code path
// as gaffer approve, reject and answer --decision.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	req := host.AnswerRequest{RunID: id, Feedback: strings.TrimSpace(r.PostFormValue("feedback"))}
	action := r.PostFormValue("action")
	v, err := host.ParseVerdict(action)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("unknown action %q: want approve, reject, retry, stop or skip", action))
		return
	}
	if v == host.Reject && req.Feedback == "" {
		s.fail(w, r, http.StatusBadRequest, "a rejection needs feedback: say what the architect should change")
		return
	}
	req.Verdict = v
	if _, err := s.cfg.Service.Answer(r.Context(), req); err != nil {
		s.serviceError(w, r, err)
		return
	}
	said := map[host.Verdict]string{host.Approve: "approved", host.Reject: "rejected"}[v]
	if said == "" {
		said = v.String()
	}
	http.Redirect(w, r, "/runs/"+url.PathEscape(id)+"?said="+said, http.StatusSeeOther)
}

// events streams server-sent events: "update" whenever the run (any run
// on "/events") checkpoints, ends or reports progress, and once at the
// start, so that a page loaded before its stream opened catches up.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	id := r.PathValue("id")
	changed := make(chan struct{}, 1)
	unsubscribe := s.cfg.Subscribe(func(ev graph.Event) {
		if id != "" && ev.RunID != id {
			return
		}
		switch ev.Kind {
		case graph.CheckpointSaved, graph.RunFinished, graph.Custom:
		default:
			return
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer unsubscribe()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(msg string) bool {
		if _, err := fmt.Fprint(w, msg); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	if !send("retry: 2000\n\nevent: update\ndata: {}\n\n") {
		return
	}
	ping := time.NewTicker(s.cfg.Heartbeat)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		case <-ping.C:
			if !send(": ping\n\n") {
				return
			}
		case <-changed:
			if !send("event: update\ndata: {}\n\n") {
				return
			}
		}
	}
}

// render executes the page name into w with status.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, data); err != nil {
		s.cfg.Logger.Error("inbox: render", "page", name, "path", r.URL.Path, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// errorPage is a refusal's page.
type errorPage struct {
	Status  int
	Title   string
	Message string
}

// fail answers with a page that says msg.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error.html", errorPage{Status: status, Title: http.StatusText(status), Message: msg})
}

// serviceError answers with the status of the Service's error: a refusal
// is 404 (no such run) or 409, a bad request 400, the rest 500.
func (s *Server) serviceError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch host.CodeOf(err) {
	case host.Usage, host.Invalid:
		status = http.StatusBadRequest
	case host.Refused:
		status = http.StatusConflict
		if errors.Is(err, host.ErrNoRun) || strings.HasPrefix(err.Error(), "no run ") {
			status = http.StatusNotFound
		}
	case host.Held, host.Waiting:
		status = http.StatusConflict
	case host.Machine:
		status = http.StatusServiceUnavailable
	}
	if status == http.StatusInternalServerError {
		s.cfg.Logger.Error("inbox: request failed", "path", r.URL.Path, "err", err)
	}
	s.fail(w, r, status, err.Error())
}
