package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
	"github.com/gaffer-dev/gaffer/state"
)

// Defaults of Config.
const (
	DefaultAttempts       = 5
	DefaultBackoff        = time.Second
	DefaultMaxDelay       = 30 * time.Second
	DefaultCommandTimeout = 10 * time.Second
	DefaultFlush          = 5 * time.Second
)

// Config says how a Deliverer delivers. Validate fills in the defaults.
type Config struct {
	// Cursor is the file of the targets' cursors, beside the store
	// (CursorFile).
	Cursor string
	// Load reads a run's latest state.
	Load func(ctx context.Context, runID string) (state.ExecutionState, error)
	// Runs lists the store's runs, whose pending notices are delivered
	// when the Deliverer starts; nil: none.
	Runs   func(ctx context.Context) ([]string, error)
	Getenv func(string) string // default os.Getenv
	Client *http.Client        // default a client with a 10s timeout
	Logger *slog.Logger        // default discards
	// Attempts bounds the attempts of one notice to one target; Backoff
	// is the wait before the second, doubled for each next one up to
	// MaxDelay.
	Attempts       int
	Backoff        time.Duration
	MaxDelay       time.Duration
	CommandTimeout time.Duration // a command target's time to run
	Flush          time.Duration // how long Close waits for pending deliveries
	// Before, when set, is called before each delivery (the kill test's
	// pause).
	Before func(ctx context.Context, runID string, n state.Notice)
}

// CursorFile is the cursors' file of the store at storeDir.
func CursorFile(storeDir string) string { return storeDir + ".notify.json" }

func (c Config) validate() (Config, error) {
	if c.Cursor == "" || c.Load == nil {
		return c, errors.New("notify: a Config needs Cursor and Load")
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Attempts <= 0 {
		c.Attempts = DefaultAttempts
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = DefaultMaxDelay
	}
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = DefaultCommandTimeout
	}
	if c.Flush <= 0 {
		c.Flush = DefaultFlush
	}
	return c, nil
}

// Deliverer delivers the notices of the runs it is poked about, on its
// own goroutine; Poke never blocks.
type Deliverer struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	pending map[string]bool // runs to look at
	order   []string
	closing bool
	wake    chan struct{}
	done    chan struct{}

	cursors cursors // only the goroutine touches it
}

// Start starts a Deliverer, which first looks at every run of
// Config.Runs.
func Start(cfg Config) (*Deliverer, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Deliverer{cfg: cfg, ctx: ctx, cancel: cancel, pending: map[string]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	d.cursors, err = loadCursors(cfg.Cursor)
	if err != nil {
		cfg.Logger.Warn("notify: cursors unreadable; pending notices are delivered again", "file", cfg.Cursor, "err", err)
		d.cursors = newCursors()
	}
	go d.loop()
	return d, nil
}

// Poke asks for runID's notices to be delivered.
func (d *Deliverer) Poke(runID string) {
	d.mu.Lock()
	if !d.pending[runID] {
		d.pending[runID] = true
		d.order = append(d.order, runID)
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Close delivers what is pending, waiting at most Config.Flush, then
// stops: what is still undelivered stays in the outboxes for the next
// process.
func (d *Deliverer) Close() {
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(d.cfg.Flush)
	defer t.Stop()
	select {
	case <-d.done:
	case <-t.C:
		d.cfg.Logger.Warn("notify: notices still undelivered at exit; the next gaffer process on this store delivers them")
	}
	d.cancel()
	<-d.done
}

// next pops a run to look at; ok is false when there is none and the
// Deliverer is closing.
func (d *Deliverer) next() (runID string, ok bool) {
	for {
		d.mu.Lock()
		if len(d.order) > 0 {
			runID, d.order = d.order[0], d.order[1:]
			delete(d.pending, runID)
			d.mu.Unlock()
			return runID, true
		}
		closing := d.closing
		d.mu.Unlock()
		if closing || d.ctx.Err() != nil {
			return "", false
		}
		select {
		case <-d.wake:
		case <-d.ctx.Done():
		}
	}
}

func (d *Deliverer) loop() {
	defer close(d.done)
	if d.cfg.Runs != nil {
		ids, err := d.cfg.Runs(d.ctx)
		if err != nil {
			d.cfg.Logger.Debug("notify: list runs", "err", err)
		}
		for _, id := range ids {
			d.Poke(id)
		}
	}
	for {
		id, ok := d.next()
		if !ok {
			return
		}
		d.deliverRun(id)
	}
}

// targetKey names target i of a run's config in the cursors.
func targetKey(i int, t state.NotifyTarget) string { return fmt.Sprintf("%d-%s", i, t.Kind) }

// deliverRun delivers runID's notices after each target's cursor. A run
// settled (no targets, or ended with every notice delivered) is not read
// again: its targets are fixed when it starts and an ended run raises no
// notices, so a step of a run without notify, or a command opening a
// store of many old runs, costs no state read.
func (d *Deliverer) deliverRun(runID string) {
	if d.cursors.Settled[runID] {
		return
	}
	s, err := d.cfg.Load(d.ctx, runID)
	if err != nil {
		// The command that reads the run says what is wrong with it; a
		// notice stays in the outbox for when the run reads again.
		d.cfg.Logger.Debug("notify: read run", "run", runID, "err", err)
		return
	}
	nc := s.Config.Notify
	if nc == nil || len(nc.Targets) == 0 {
		d.settle(runID)
		return
	}
	for i, t := range nc.Targets {
		key := targetKey(i, t)
		for _, n := range s.Outbox.Entries {
			if n.Seq <= d.cursors.get(runID, key) {
				continue
			}
			if d.cfg.Before != nil {
				d.cfg.Before(d.ctx, runID, n)
			}
			if d.ctx.Err() != nil {
				return
			}
			if err := d.deliver(runID, nc, t, n); err != nil {
				if d.ctx.Err() != nil {
					return // stopped: delivered by the next process
				}
				d.cfg.Logger.Warn("notify: notice dropped", "run", runID, "seq", n.Seq, "event", n.Event,
					"target", t.Kind, "attempts", d.cfg.Attempts, "err", err)
			}
			d.cursors.set(runID, key, n.Seq)
			d.saveCursors()
		}
	}
	if s.Status.Terminal() {
		d.settle(runID)
	}
}

// settle records that runID needs no more reading (deliverRun).
func (d *Deliverer) settle(runID string) {
	d.cursors.Settled[runID] = true
	d.saveCursors()
}

func (d *Deliverer) saveCursors() {
	if err := d.cursors.save(d.cfg.Cursor); err != nil {
		d.cfg.Logger.Warn("notify: save cursors", "file", d.cfg.Cursor, "err", err)
	}
}

// deliver sends n to t, retrying with backoff up to Config.Attempts.
func (d *Deliverer) deliver(runID string, nc *state.NotifyConfig, t state.NotifyTarget, n state.Notice) error {
	m := MessageOf(runID, nc, n)
	var err error
	wait := d.cfg.Backoff
	for attempt := 1; ; attempt++ {
		if err = d.send(t, m); err == nil {
			return nil
		}
		if attempt >= d.cfg.Attempts {
			return err
		}
		d.cfg.Logger.Info("notify: delivery failed; retrying", "run", runID, "seq", n.Seq, "target", t.Kind, "attempt", attempt, "wait", wait, "err", err)
		select {
		case <-time.After(wait):
		case <-d.ctx.Done():
			return d.ctx.Err()
		}
		wait = min(2*wait, d.cfg.MaxDelay)
	}
}

// Message is what a target is told of one notice: the webhook's JSON body.
type Message struct {
	Run   string    `json:"run"`
	Event string    `json:"event"`
	Seq   uint64    `json:"seq"`
	Key   string    `json:"key"` // run:seq, the idempotency key
	Time  time.Time `json:"time"`
	Title string    `json:"title"`
	Body  string    `json:"body,omitempty"`
	URL   string    `json:"url,omitempty"` // the run's page in the inbox, when the config names its base URL
}

// MessageOf is the message of notice n of run runID.
func MessageOf(runID string, nc *state.NotifyConfig, n state.Notice) Message {
	m := Message{Run: runID, Event: n.Event, Seq: n.Seq, Key: fmt.Sprintf("%s:%d", runID, n.Seq), Time: n.Time, Title: n.Title, Body: n.Body}
	if nc != nil && nc.URL != "" {
		m.URL = strings.TrimRight(nc.URL, "/") + "/runs/" + runID
	}
	return m
}

// cursors is the cursors' file: by run, by target, the sequence number of
// the last notice the target took (or that was dropped for it).
type cursors struct {
	Runs map[string]map[string]uint64 `json:"runs"`
	// Settled are the runs not worth reading again (deliverRun).
	Settled map[string]bool `json:"settled,omitempty"`
}

func newCursors() cursors {
	return cursors{Runs: map[string]map[string]uint64{}, Settled: map[string]bool{}}
}

func loadCursors(path string) (cursors, error) {
	c := newCursors()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, err
	}
	if c.Runs == nil {
		c.Runs = map[string]map[string]uint64{}
	}
	if c.Settled == nil {
		c.Settled = map[string]bool{}
	}
	return c, nil
}

func (c cursors) get(run, target string) uint64 { return c.Runs[run][target] }

func (c cursors) set(run, target string, seq uint64) {
	if c.Runs[run] == nil {
		c.Runs[run] = map[string]uint64{}
	}
	c.Runs[run][target] = seq
}

func (c cursors) save(path string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b, 0o600)
}
