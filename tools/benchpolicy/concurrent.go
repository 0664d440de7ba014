package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tailscale/hujson"

	"github.com/qtail/terraform-provider-qtail/internal/fake/sandbox"
	"github.com/qtail/terraform-provider-qtail/tools/internal/tfrun"
)

// concurrentResult is what R configurations applying (or destroying) at
// once on one policy cost.
type concurrentResult struct {
	writes, conflicts, validates int
	wall                         time.Duration
	// kept is the number of the configurations' grants in the policy
	// file afterwards; handWritten tells whether everything else of the
	// file is as it was.
	kept        int
	handWritten bool
}

// statusCounter counts the answers to the policy file's writes by status.
type statusCounter struct {
	next http.Handler
	mu   sync.Mutex
	by   map[int]int
}

func (c *statusCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/acl") {
		c.next.ServeHTTP(w, r)
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	c.next.ServeHTTP(rec, r)
	c.mu.Lock()
	c.by[rec.status]++
	c.mu.Unlock()
}

// count returns the number of writes answered with status.
func (c *statusCounter) count(status int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.by[status]
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// concurrent runs R configurations of g grants each, every one with a
// state of its own, against one sandbox: all apply at once, then all
// destroy at once; first with qtail_grant resources, then with one
// qtail_grants per configuration. It prints the writes (and the floor:
// one per wave of Terraform's parallelism per configuration, which no
// batching across processes can go under), the 412 answers, the wall
// time, the grants kept and whether the hand-written content was kept.
func (b *bench) concurrent(ctx context.Context, r, g int) error {
	type variant struct {
		name   string
		config func(cfg, g int) string
		floor  int
	}
	waves := (g + b.o.parallelism - 1) / b.o.parallelism
	variants := []variant{
		{"qtail_grant", concurrentGrants, r * waves},
		{"qtail_grants", concurrentGrantSet, r},
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\n%d configurations of %d grants at once on one policy, %s per API call, -parallelism=%d\n", r, g, b.o.latency, b.o.parallelism)
	fmt.Fprintln(tw, "resource\tcommand\twrites\tfloor\t412 answers\tvalidations\twall\tgrants kept\thand-written content kept\t")
	failed := false
	for _, v := range variants {
		fmt.Printf("%d x %d grants, %s ...\n", r, g, v.name)
		apply, destroy, err := b.concurrentRun(ctx, v.name, r, g, v.config)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		for _, row := range []struct {
			cmd  string
			res  concurrentResult
			want int
		}{{"apply", apply, r * g}, {"destroy", destroy, 0}} {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.2fs\t%d of %d\t%v\t\n", v.name, row.cmd, row.res.writes, v.floor,
				row.res.conflicts, row.res.validates, row.res.wall.Seconds(), row.res.kept, row.want, row.res.handWritten)
			if row.res.kept != row.want || !row.res.handWritten {
				failed = true
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed {
		return errors.New("grants or hand-written content were lost")
	}
	return nil
}

// concurrentRun applies, then destroys, the r configurations at once.
func (b *bench) concurrentRun(ctx context.Context, name string, r, g int, config func(cfg, g int) string) (apply, destroy concurrentResult, err error) {
	world, err := sandbox.New(sandbox.Options{Latency: b.o.latency, DeployTime: time.Second})
	if err != nil {
		return apply, destroy, err
	}
	initial, _ := world.Tailnet.Policy()
	counter := &statusCounter{next: world.Handler(), by: map[int]int{}}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return apply, destroy, err
	}
	srv := &http.Server{Handler: counter, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	base := "http://" + ln.Addr().String()
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+b.rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	for k, v := range world.Env(base) {
		env = append(env, k+"="+v)
	}
	dirs := make([]string, r)
	for i := range r {
		dirs[i] = filepath.Join(b.work, "concurrent", name, fmt.Sprintf("c%02d", i))
		if err := os.MkdirAll(dirs[i], 0o755); err != nil {
			return apply, destroy, err
		}
		if err := os.WriteFile(filepath.Join(dirs[i], "main.tf"), []byte(config(i, g)), 0o600); err != nil {
			return apply, destroy, err
		}
	}
	p := fmt.Sprintf("-parallelism=%d", b.o.parallelism)
	runAll := func(args ...string) (concurrentResult, error) {
		var res concurrentResult
		before, err := tfrun.Calls(ctx, base)
		if err != nil {
			return res, err
		}
		writesBefore, conflictsBefore := counter.count(http.StatusOK), counter.count(http.StatusPreconditionFailed)
		errs := make([]error, r)
		var wg sync.WaitGroup
		start := time.Now()
		for i, dir := range dirs {
			wg.Go(func() {
				code, out, err := terraform(ctx, b.o.terraform, dir, env, append(args, p))
				if err == nil && code != 0 {
					err = fmt.Errorf("terraform %s in %s exited with %d:\n%s", args[0], filepath.Base(dir), code, tfrun.Tail(out, 30))
				}
				errs[i] = err
			})
		}
		wg.Wait()
		res.wall = time.Since(start)
		if err := errors.Join(errs...); err != nil {
			return res, err
		}
		after, err := tfrun.Calls(ctx, base)
		if err != nil {
			return res, err
		}
		res.writes = counter.count(http.StatusOK) - writesBefore
		res.conflicts = counter.count(http.StatusPreconditionFailed) - conflictsBefore
		res.validates = after[routeValidate] - before[routeValidate]
		body, _ := world.Tailnet.Policy()
		res.kept = strings.Count(string(body), "// qtail:grant:")
		res.handWritten, err = sameOutsideBenchGrants(initial, body)
		return res, err
	}
	if apply, err = runAll("apply", "-auto-approve", "-input=false"); err != nil {
		return apply, destroy, err
	}
	if destroy, err = runAll("destroy", "-auto-approve", "-input=false"); err != nil {
		return apply, destroy, err
	}
	if body, _ := world.Tailnet.Policy(); !bytes.Equal(body, initial) {
		destroy.handWritten = false
	}
	return apply, destroy, nil
}

// sameOutsideBenchGrants reports whether the policy files a and b hold the
// same content once the benchmark's grants (those to 100.64.0.0/10
// addresses) are left out.
func sameOutsideBenchGrants(a, b []byte) (bool, error) {
	norm := func(body []byte) ([]byte, error) {
		std, err := hujson.Standardize(bytes.Clone(body))
		if err != nil {
			return nil, err
		}
		var file map[string]any
		if err := json.Unmarshal(std, &file); err != nil {
			return nil, err
		}
		if grants, ok := file["grants"].([]any); ok {
			var kept []any
			for _, g := range grants {
				if m, ok := g.(map[string]any); ok {
					if dst, ok := m["dst"].([]any); ok && len(dst) == 1 && strings.HasPrefix(fmt.Sprint(dst[0]), "100.64.") {
						continue
					}
				}
				kept = append(kept, g)
			}
			file["grants"] = kept
		}
		return json.Marshal(file)
	}
	na, err := norm(a)
	if err != nil {
		return false, err
	}
	nb, err := norm(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(na, nb), nil
}

// concurrentGrants is configuration cfg's g qtail_grant, named apart from
// every other configuration's.
func concurrentGrants(cfg, g int) string {
	var b strings.Builder
	fmt.Fprintf(&b, header, "    qtail = {\n      source = \"qtail/qtail\"\n    }\n")
	b.WriteString("\nprovider \"qtail\" {}\n")
	for i := range g {
		gr := grant(cfg*g+i, false)
		fmt.Fprintf(&b, "\nresource \"qtail_grant\" \"g%d\" {\n  name = \"c%02d-%d\"\n  src  = [%q]\n  dst  = [%q]\n  ip   = [%q]\n}\n",
			i, cfg, i, gr.Src[0], gr.Dst[0], gr.IP[0])
	}
	return b.String()
}

// concurrentGrantSet is the same grants in one qtail_grants.
func concurrentGrantSet(cfg, g int) string {
	var b strings.Builder
	fmt.Fprintf(&b, header, "    qtail = {\n      source = \"qtail/qtail\"\n    }\n")
	b.WriteString("\nprovider \"qtail\" {}\n\nresource \"qtail_grants\" \"bench\" {\n  grants = {\n")
	for i := range g {
		gr := grant(cfg*g+i, false)
		fmt.Fprintf(&b, "    \"c%02d-%d\" = { src = [%q], dst = [%q], ip = [%q] }\n", cfg, i, gr.Src[0], gr.Dst[0], gr.IP[0])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}
