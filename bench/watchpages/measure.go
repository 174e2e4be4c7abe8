package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/cputime"
)

// A page is one address measured, named for the table.
type page struct{ name, path string }

// pages lists every page and API the watch dashboard serves, over the
// fleet f; the flame graphs' addresses are read from the service pages
// that frame them.
func pages(ctx context.Context, base string, f fleet) ([]page, error) {
	one := `{instance="10.1.0.0:6060"}`
	svc := `{job="leftpad"}`
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	view := func(v url.Values) string { return "/services/view?" + v.Encode() }
	ps := []page{
		{"home", "/"},
		{"services 6h", "/services"},
		{"services 24h", "/services?since=24h"},
	}
	for _, r := range []string{"15m", "1h", "24h", "7d"} {
		ps = append(ps, page{"service 1 target " + r, view(url.Values{"target": {one}, "from": {r}})})
	}
	for _, r := range []string{"1h", "24h"} {
		ps = append(ps, page{"service 100 targets " + r, view(url.Values{"target": {svc}, "from": {r}})})
	}
	ps = append(ps,
		page{"service heap 24h", view(url.Values{"target": {one}, "type": {"heap"}, "from": {"24h"}})},
		page{"service goroutine 1h", view(url.Values{"target": {one}, "type": {"goroutine"}, "from": {"1h"}})},
		page{"diff now vs 1h ago", view(url.Values{"target": {one}, "from": {"1h"}, "base_from": {"2h"}, "base_to": {"1h"}})},
		page{"diff v2 vs v1", view(url.Values{"target": {`{instance="10.1.0.0:6060",version="v2"}`}, "base_target": {`{instance="10.1.0.0:6060",version="v1"}`},
			"from": {stamp(f.Deploy)}, "to": {stamp(f.End)}, "base_from": {stamp(f.start())}, "base_to": {stamp(f.Deploy)}})},
		page{"function 24h", view(url.Values{"target": {one}, "from": {"24h"}, "fn": {slowFunc}})},
		page{"leaks 1h", "/leaks"},
		page{"leaks 24h 100 targets", "/leaks?" + url.Values{"target": {svc}, "since": {"24h"}}.Encode()},
		page{"deploys 24h", "/deploys"},
		page{"runs", "/runs"},
		page{"benchmarks", "/benchmarks"},
	)
	for _, fr := range []struct{ name, target string }{{"1 target", one}, {"100 targets", svc}} {
		src, err := flameOf(ctx, base+view(url.Values{"target": {fr.target}, "from": {"24h"}}))
		if err != nil {
			return nil, err
		}
		ps = append(ps, page{"flamegraph 24h " + fr.name, src},
			page{"pprof top 24h " + fr.name, strings.Replace(src, "/flamegraph?", "/top?", 1)})
	}
	api := func(name, path string, v url.Values) page {
		return page{"api " + name, "/api/v1/profiles/" + path + "?" + v.Encode()}
	}
	ps = append(ps,
		api("targets", "targets", url.Values{}),
		api("merge 24h 1 target", "merge", url.Values{"query": {one}, "since": {"24h"}}),
		api("merge 24h 100 targets", "merge", url.Values{"query": {svc}, "since": {"24h"}}),
		api("top 24h", "top", url.Values{"query": {one}, "since": {"24h"}}),
		api("function 24h", "function", url.Values{"query": {one}, "since": {"24h"}, "name": {slowFunc}}),
		api("diff 1h", "diff", url.Values{"query": {one}, "since": {"1h"}}),
		api("leaks 1h", "leaks", url.Values{}),
		api("deploys 24h", "deploys", url.Values{"since": {"24h"}}),
		api("findings 1h", "findings", url.Values{"query": {one}, "since": {"1h"}}),
	)
	return ps, nil
}

var flameSrc = regexp.MustCompile(`<iframe class="flame"[^>]* src="([^"]+)"`)

// flameOf reads the address of the flame graph the page at u frames.
func flameOf(ctx context.Context, u string) (string, error) {
	body, code, _, err := get(ctx, u, "flame")
	if err != nil {
		return "", err
	}
	m := flameSrc.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		return "", fmt.Errorf("%s: %d, no flame graph framed", u, code)
	}
	return html.UnescapeString(m[1]), nil
}

// get requests u and returns its body, status and time to the last byte.
func get(ctx context.Context, u, name string) (string, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", 0, 0, err
	}
	req.Header.Set("X-Page", name)
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode, time.Since(t0), err
}

// pageBudget bounds the time one page's requests take in a round: a page
// slower than that is measured fewer times (said in the table).
const pageBudget = 60 * time.Second

// measurePages requests every page n times a round, rounds times, and
// prints each page's p50 and p95 (medians over the rounds) with the load
// average.
func measurePages(ctx context.Context, base string, pid int, f fleet, n, rounds int, only *regexp.Regexp) error {
	ps, err := pages(ctx, base, f)
	if err != nil {
		return err
	}
	ps = slices.DeleteFunc(ps, func(p page) bool { return !only.MatchString(p.name) })
	p50 := make([][]time.Duration, len(ps))
	p95 := make([][]time.Duration, len(ps))
	count := make([]int, len(ps))
	cpu := make([][]time.Duration, len(ps))
	status := make([]int, len(ps))
	var loads []string
	for r := range rounds {
		loads = append(loads, loadavg())
		for i, p := range ps {
			var ts []time.Duration
			began := time.Now()
			c0 := cpuOf(pid)
			for range n {
				_, code, d, err := get(ctx, base+p.path, p.name)
				if err != nil {
					return fmt.Errorf("%s: %w", p.name, err)
				}
				status[i] = code
				ts = append(ts, d)
				if time.Since(began) > pageBudget {
					break
				}
			}
			cpu[i] = append(cpu[i], (cpuOf(pid)-c0)/time.Duration(len(ts)))
			slices.Sort(ts)
			p50[i] = append(p50[i], quantile(ts, 0.5))
			p95[i] = append(p95[i], quantile(ts, 0.95))
			count[i] += len(ts)
			fmt.Fprintf(os.Stderr, "round %d: %-28s %3d  p50 %8s  p95 %8s  (%d)\n", r+1, p.name, status[i], quantile(ts, 0.5).Round(time.Millisecond), quantile(ts, 0.95).Round(time.Millisecond), len(ts))
		}
	}
	loads = append(loads, loadavg())
	fmt.Printf("\n%d targets, %d rounds of up to %d requests per page; load average (1 min) at each round's start and the end: %s on %s\n\n",
		f.Targets, rounds, n, strings.Join(loads, ", "), cpus())
	fmt.Println("| page | status | requests | p50 | p95 | server CPU per request | ≤ 200 ms |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	for i, p := range ps {
		a, b := median(p50[i]), median(p95[i])
		ok := "yes"
		if b > 200*time.Millisecond {
			ok = "**no**"
		}
		fmt.Printf("| %s | %d | %d | %s | %s | %s | %s |\n", p.name, status[i], count[i], ms(a), ms(b), ms(median(cpu[i])), ok)
	}
	if peak := peakMemory(pid); peak != "" {
		fmt.Printf("\nthe server's peak resident memory: %s\n", peak)
	}
	return nil
}

// peakMemory is the peak resident memory of process pid, as Linux says
// it (VmHWM), "" where the system does not say.
func peakMemory(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// quantile of sorted ts, the nearest rank.
func quantile(ts []time.Duration, q float64) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	i := int(q*float64(len(ts))+0.999999) - 1
	return ts[max(0, min(i, len(ts)-1))]
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// cpuOf is the user and system CPU time process pid has taken, 0 where
// the system does not say.
func cpuOf(pid int) time.Duration {
	d, _ := cputime.Of(pid)
	return d
}

// loadavg is the 1-minute load average, "?" where there is none.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func cpus() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "? cores"
	}
	return fmt.Sprintf("%d cores", strings.Count(string(b), "\nprocessor")+1)
}
