package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// liveTree is progress on a terminal with a screen: the run's latest
// checkpoint drawn as a frame that the screen keeps pinned below every
// other line (the driver's actions, log lines, progress's own lines) and
// redraws in place at every event of the run.
type liveTree struct {
	screen *screen
	now    func() time.Time // the running phase's elapsed time
	state  state.ExecutionState
	have   bool   // state holds a checkpoint of the run
	node   string // the node running now; "" between nodes
	paused bool   // no frame: an approval question is asked, or the run stopped
}

// frame is the tree of the latest checkpoint, with the node running.
func (l *liveTree) frame() []string {
	var b strings.Builder
	b.WriteString("\n") // a blank line between the lines above and the tree
	v := runview.Of(l.state, l.state.Status, l.now())
	writeRunHeading(&b, v, true)
	writePhaseTree(&b, v.Phases)
	if l.node != "" {
		fmt.Fprintf(&b, "» %s\n", l.node)
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

func (l *liveTree) draw() {
	if l.paused || !l.have {
		return
	}
	l.screen.show(l.frame())
}

// finish draws s as the last frame and leaves it on the screen: what is
// written next goes below it.
func (l *liveTree) finish(s state.ExecutionState) {
	l.state, l.have, l.node, l.paused = s, true, "", false
	l.draw()
	l.screen.stop()
	l.paused = true
}

// withLive makes p draw the run's tree live on sc.
func (p *progress) withLive(sc *screen, now func() time.Time) *progress {
	p.live, p.now = &liveTree{screen: sc, now: now}, now
	return p
}

func (p *progress) liveEvent(e graph.Event) {
	switch e.Kind {
	case graph.NodeStarted:
		p.last, p.live.node = e.Node, e.Node
		if e.Attempt > 1 {
			fmt.Fprintf(p.w, "» %s (attempt %d)\n", e.Node, e.Attempt)
		}
	case graph.NodeFinished:
		p.live.node = ""
		if nodeFailure(e.Err) {
			fmt.Fprintf(p.w, "✗ %s: %v\n", e.Node, e.Err)
		}
	case graph.Custom:
		p.custom(e)
	}
	if e.Kind == graph.CheckpointSaved || !p.live.have {
		p.refreshLocked()
	}
	p.live.draw()
}

// refreshLocked reads the run's latest checkpoint; before the first one
// there is nothing to draw yet.
func (p *progress) refreshLocked() {
	if snap, err := p.runner.State(context.Background(), host.RunRequest{RunID: p.runID}); err == nil {
		p.live.state, p.live.have = snap.State, true
	}
}

// pause takes the live frame off the screen, for a question: the
// question's own lines must not be drawn over.
func (p *progress) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live != nil {
		p.live.paused = true
		p.live.screen.clear()
	}
}

// resume draws the live frame again after pause.
func (p *progress) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live != nil {
		p.live.paused = false
		p.live.draw()
	}
}

// end leaves the run's latest frame on the screen when the run stopped
// on an error.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live == nil || p.live.paused {
		return
	}
	p.refreshLocked()
	if p.live.have {
		p.live.finish(p.live.state)
		return
	}
	p.live.screen.stop()
	p.live.paused = true
}

// tick redraws the live frame every d until stop is called.
func (p *progress) tick(d time.Duration) (stop func()) {
	t := time.NewTicker(d)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.mu.Lock()
				p.live.draw()
				p.mu.Unlock()
			}
		}
	}()
	return func() {
		t.Stop()
		close(done)
		wg.Wait()
	}
}
