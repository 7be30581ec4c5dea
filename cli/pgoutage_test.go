package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
)

// TestServePostgresOutageLongerThanTheLease takes the database of two
// `gaffer serve` hosts down (pg_ctl stop -m immediate) while four runs go,
// for longer than the queue's lease and the store's outage wait, then
// starts it again. A store that cannot be reached is the machine's fault:
// each run stopped by it is requeued, not failed, and every run completes
// without a manual resume.
func TestServePostgresOutageLongerThanTheLease(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	if os.Getenv(pgtest.EnvURL) != "" {
		t.Skip("stops the server: needs one of its own, not " + pgtest.EnvURL)
	}
	srv := ownPostgres(t)
	url := srv.URL("postgres")
	dir, _, script := demoRepo(t)
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	bin = binWithEnv(t, bin, "GAFFER_STORE="+url, "GAFFER_STORE_OUTAGE_WAIT=2s")
	a := startServe(t, bin, dir, "--host-id", "a", "--queue-lease", "2s", "--workers", "2")
	b := startServe(t, bin, dir, "--host-id", "b", "--queue-lease", "2s", "--workers", "2")
	runs := []string{"r-1", "r-2", "r-3", "r-4"}
	for _, id := range runs {
		out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", goal, "--script", script, "--run-id", id, "--auto-approve", "--pace", "400ms")
		if code != 0 {
			t.Fatalf("submit %s: exit %d\n%s", id, code, out)
		}
	}
	for _, id := range runs {
		waitStatus(t, bin, dir, id, "running", a)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second) // > the lease (2s) + the outage wait (2s)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	logs := func() string { return "serve a:\n" + a.output() + "\nserve b:\n" + b.output() }
	deadline := time.Now().Add(150 * time.Second)
	for _, id := range runs {
		for {
			v, err := tryStatus(bin, dir, id)
			if err != nil {
				t.Fatalf("%v\n%s", err, logs())
			}
			if v.Status == "completed" {
				break
			}
			if v.Status == "failed" || v.Status == "halted" || time.Now().After(deadline) {
				t.Fatalf("run %s is %s (stopped %v, errors %q), want completed without a resume\n%s", id, v.Status, v.Stopped, v.Errors, logs())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var failed int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM gaffer.jobs WHERE state = 'failed'`).Scan(&failed); err != nil {
		t.Fatal(err)
	}
	if failed != 0 {
		t.Errorf("%d job rows failed by the outage", failed)
	}
	if !strings.Contains(logs(), "run stopped by the machine") {
		t.Logf("no run was stopped by the outage (it hit between steps):\n%s", logs())
	}
	for _, s := range []*server{a, b} {
		if code := s.stop(syscall.SIGTERM); code != 0 {
			t.Errorf("serve exit %d after SIGTERM", code)
		}
	}
}

// TestStoreOutageWaitEnv: GAFFER_STORE_OUTAGE_WAIT is a positive duration,
// anything else a usage error naming it.
func TestStoreOutageWaitEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "45s": 45 * time.Second, "2m": 2 * time.Minute} {
		if got, err := storeOutageWait(func(string) string { return v }); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"0s", "-1s", "soon"} {
		_, err := storeOutageWait(func(string) string { return v })
		if ExitCode(err) != ExitUsage || !strings.Contains(fmt.Sprint(err), storeOutageWaitEnv) {
			t.Errorf("%q: %v (exit %d), want a usage error naming %s", v, err, ExitCode(err), storeOutageWaitEnv)
		}
	}
}
