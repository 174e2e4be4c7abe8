package scrape

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeFile writes data to name under dir, as a new file renamed over
// the old one (as tools that write target files should, so a watcher
// never reads half a file), and returns its path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".new", []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigDefaults(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "api.token", "s3cret\n")
	p := writeFile(t, dir, "scrape.yml", `
scrape_configs:
  - job_name: api
    bearer_token_file: api.token
    pprof_path: /internal/pprof
    static_configs:
      - targets: ["127.0.0.1:6060", "[::1]:6061"]
        labels: {service: api, "team name": "pay-ments", région: "île-de-france ✓"}
    file_sd_configs:
      - files: [targets/*.json]
  - job_name: worker
    scrape_interval: 30s
    scrape_timeout: 2s
    profiles: [cpu, goroutineleak]
    static_configs:
      - targets: ["worker:6060"]
`)
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Global.ScrapeInterval != Duration(DefaultInterval) || c.Global.ScrapeTimeout != Duration(DefaultTimeout) {
		t.Errorf("global defaults: %+v", c.Global)
	}
	api, worker := c.ScrapeConfigs[0], c.ScrapeConfigs[1]
	if api.ScrapeInterval != Duration(10*time.Second) || api.Scheme != "http" || api.PprofPath != "/internal/pprof/" {
		t.Errorf("api defaults: interval %s scheme %s path %s", api.ScrapeInterval, api.Scheme, api.PprofPath)
	}
	if api.Token != "s3cret" {
		t.Errorf("token %q", api.Token)
	}
	if !reflect.DeepEqual(api.Profiles, DefaultProfiles) {
		t.Errorf("profiles %v", api.Profiles)
	}
	want := map[string]string{"service": "api", "team name": "pay-ments", "région": "île-de-france ✓"}
	if !reflect.DeepEqual(api.StaticConfigs[0].Labels, want) {
		t.Errorf("labels %q, want %q", api.StaticConfigs[0].Labels, want)
	}
	if got := api.FileSDConfigs[0]; got.Files[0] != filepath.Join(dir, "targets/*.json") || got.RefreshInterval != Duration(DefaultRefreshInterval) {
		t.Errorf("file_sd %+v", got)
	}
	if worker.ScrapeInterval != Duration(30*time.Second) || worker.ScrapeTimeout != Duration(2*time.Second) ||
		!reflect.DeepEqual(worker.Profiles, []string{"cpu", "goroutineleak"}) {
		t.Errorf("worker %+v", worker)
	}
}

// TestConfigErrors checks that each mistake is one line naming the file,
// the line and the key.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"typo in global", "global:\n  scrape_intervall: 10s\nscrape_configs: []\n",
			`scrape.yml:2: unknown key "scrape_intervall" in global (did you mean scrape_interval?)`},
		{"typo at top", "scrape_config:\n  - job_name: a\n",
			`scrape.yml:1: unknown key "scrape_config" (did you mean scrape_configs?)`},
		{"typo in job", "scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: [\"h:1\"]\n    profile: [cpu]\n",
			`scrape.yml:5: unknown key "profile" in scrape_configs[0] (did you mean profiles?)`},
		{"typo in tls", "scrape_configs:\n  - job_name: a\n    tls_config:\n      ca_fil: x\n",
			`scrape.yml:4: unknown key "ca_fil" in tls_config (did you mean ca_file?)`},
		{"bad duration", "global:\n  scrape_interval: ten\n",
			`scrape.yml:2: scrape_interval: "ten" is not a duration`},
		{"under a second", "global:\n  scrape_interval: 500ms\nscrape_configs:\n  - job_name: a\n    static_configs: [{targets: [\"h:1\"]}]\n",
			`scrape.yml:2: scrape_interval: 500ms is under 1s`},
		{"fractional seconds", "scrape_configs:\n  - job_name: a\n    scrape_interval: 1500ms\n    static_configs: [{targets: [\"h:1\"]}]\n",
			`scrape.yml:3: scrape_interval: 1.5s is not a whole number of seconds`},
		{"unknown profile", "scrape_configs:\n  - job_name: a\n    profiles: [cpu, heapp]\n    static_configs: [{targets: [\"h:1\"]}]\n",
			`scrape.yml:3: profiles: unknown profile type "heapp" (did you mean heap?)`},
		{"bad target", "scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: [\"http://h:1/debug/pprof/\"]\n",
			`scrape.yml:4: targets: "http://h:1/debug/pprof/": want host:port; the scheme and path go in scheme and pprof_path`},
		{"no port", "scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: [h]\n",
			`scrape.yml:4: targets: "h": want host:port`},
		{"duplicate job", "scrape_configs:\n  - job_name: a\n    static_configs: [{targets: [\"h:1\"]}]\n  - job_name: a\n    static_configs: [{targets: [\"h:2\"]}]\n",
			`scrape.yml:4: job_name "a" is used by another job`},
		{"no targets", "scrape_configs:\n  - job_name: a\n",
			`scrape.yml:2: job "a" has no targets`},
		{"key twice", "global:\n  scrape_interval: 10s\n  scrape_interval: 20s\n",
			`scrape.yml:3: scrape_interval is set twice in global`},
		{"label twice", "scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: [\"h:1\"]\n        labels: {a: 1, a: 2}\n",
			`scrape.yml:5: labels: "a" is set twice`},
		{"list expected", "scrape_configs:\n  job_name: a\n",
			`scrape.yml:2: scrape_configs: want a list, got a mapping`},
		{"bool expected", "scrape_configs:\n  - job_name: a\n    tls_config:\n      insecure_skip_verify: perhaps\n",
			`scrape.yml:4: insecure_skip_verify: "perhaps" is not true or false`},
		{"bad scheme", "scrape_configs:\n  - job_name: a\n    scheme: ftp\n    static_configs: [{targets: [\"h:1\"]}]\n",
			`scrape.yml:3: scheme: "ftp": want http or https`},
		{"tls without https", "scrape_configs:\n  - job_name: a\n    tls_config: {server_name: x}\n    static_configs: [{targets: [\"h:1\"]}]\n",
			`scrape.yml:3: tls_config is set but scheme is http`},
		{"missing token file", "scrape_configs:\n  - job_name: a\n    bearer_token_file: nope.token\n    static_configs: [{targets: [\"h:1\"]}]\n",
			`scrape.yml:3: bearer_token_file: open `},
		{"file_sd extension", "scrape_configs:\n  - job_name: a\n    file_sd_configs:\n      - files: [targets.txt]\n",
			`scrape.yml:4: files: "targets.txt": want a .json, .yml or .yaml file`},
		{"syntax", "global:\n\tscrape_interval: 10s\n",
			`scrape.yml:2: not valid YAML: found character that cannot start any token`},
		{"empty", "", `scrape.yml: the file is empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, dir, "scrape.yml", tc.yaml)
			_, err := LoadConfig(p)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			msg := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator))
			if !strings.HasPrefix(msg, tc.want) {
				t.Errorf("got  %s\nwant %s...", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is more than one line: %q", msg)
			}
		})
	}
}

// FuzzConfig checks that no input makes the parser panic, that every
// error is one line naming the file, and that an accepted configuration
// holds only valid values.
func FuzzConfig(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/config/*.yml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("global: {scrape_interval: 1s}\nscrape_configs: [{job_name: a, static_configs: [{targets: [\"a:1\"]}]}]"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("f.yml", data)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "f.yml") || strings.Contains(msg, "\n") {
				t.Fatalf("error not one line about f.yml: %q", msg)
			}
			return
		}
		for _, j := range c.ScrapeConfigs {
			if j.ScrapeInterval < Duration(time.Second) || time.Duration(j.ScrapeInterval)%time.Second != 0 {
				t.Fatalf("accepted interval %s", j.ScrapeInterval)
			}
			if len(j.Profiles) == 0 || j.JobName == "" {
				t.Fatalf("accepted job %+v", j)
			}
			for _, sc := range j.StaticConfigs {
				for _, tg := range sc.Targets {
					if checkAddress(tg) != nil {
						t.Fatalf("accepted target %q", tg)
					}
				}
			}
		}
	})
}
