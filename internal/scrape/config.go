package scrape

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Defaults of the configuration, as written nowhere else.
const (
	DefaultInterval        = 10 * time.Second
	DefaultTimeout         = 10 * time.Second
	DefaultPprofPath       = "/debug/pprof/"
	DefaultScheme          = "http"
	DefaultRefreshInterval = 5 * time.Minute
)

// DefaultProfiles are the profile types a job collects when it names none.
// goroutineleak is left out: asking for it makes the target run a garbage
// collection of its own, so a job asks for it by name.
var DefaultProfiles = []string{profseries.CPU, profseries.Allocs, profseries.Heap,
	profseries.Goroutine, profseries.Mutex, profseries.Block}

// A Config is a scrape configuration file, Prometheus's layout with
// perfscope's keys:
//
//	global:
//	  scrape_interval: 10s   # whole seconds, at least 1s: a CPU profile covers it
//	  scrape_timeout: 10s    # how long an answer may take beyond the window it covers
//	scrape_configs:
//	  - job_name: api
//	    scrape_interval: 15s # overrides global
//	    scheme: https        # http (default) or https
//	    pprof_path: /debug/pprof/
//	    profiles: [cpu, allocs, heap, goroutine, mutex, block, goroutineleak]
//	    bearer_token_file: api.token
//	    tls_config: {ca_file: ca.pem, cert_file: c.pem, key_file: c.key, server_name: api, insecure_skip_verify: false}
//	    static_configs:
//	      - targets: ["10.0.0.1:6060", "10.0.0.2:6060"]
//	        labels: {service: api, "team name": "pay-ments"}
//	    file_sd_configs:
//	      - files: ["targets/*.yml", "more.json"]
//	        refresh_interval: 5m
//
// Relative file names are relative to the configuration file's directory.
// Every target's label set holds job (the job name) and instance (its
// host:port) unless its labels set them; names and values are kept exactly
// as written.
type Config struct {
	Global        Global `yaml:"global"`
	ScrapeConfigs []*Job `yaml:"scrape_configs"`

	// Path is the file the configuration was read from.
	Path string `yaml:"-"`
}

// Global holds the defaults of every job.
type Global struct {
	ScrapeInterval Duration `yaml:"scrape_interval"`
	ScrapeTimeout  Duration `yaml:"scrape_timeout"`
}

// A Job is a set of targets scraped alike.
type Job struct {
	JobName         string          `yaml:"job_name"`
	ScrapeInterval  Duration        `yaml:"scrape_interval"`
	ScrapeTimeout   Duration        `yaml:"scrape_timeout"`
	Scheme          string          `yaml:"scheme"`
	PprofPath       string          `yaml:"pprof_path"`
	Profiles        []string        `yaml:"profiles"`
	BearerTokenFile string          `yaml:"bearer_token_file"`
	TLSConfig       TLSConfig       `yaml:"tls_config"`
	StaticConfigs   []*StaticConfig `yaml:"static_configs"`
	FileSDConfigs   []*FileSDConfig `yaml:"file_sd_configs"`

	// Token is the bearer token read from BearerTokenFile when the
	// configuration was loaded.
	Token string `yaml:"-"`
	// TLS is the client TLS configuration built from TLSConfig, nil
	// when it sets nothing.
	TLS *tls.Config `yaml:"-"`
}

// TLSConfig says how to reach targets over https.
type TLSConfig struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// A StaticConfig lists targets (host:port) and the labels they share.
type StaticConfig struct {
	Targets []string          `yaml:"targets"`
	Labels  map[string]string `yaml:"labels"`
}

// A FileSDConfig names files that list targets, read again when they
// change (watched, and checked every RefreshInterval besides). Each file
// is YAML (.yml, .yaml) or JSON (.json): a list of {targets, labels}
// groups, as in a static_configs entry. The last element of a name may
// be a glob (targets/*.json). Write the files whole (a new file renamed
// over the old one): a file read while half written lists what it held
// then until it changes again; a file that does not parse keeps the
// targets it listed before.
type FileSDConfig struct {
	Files           []string `yaml:"files"`
	RefreshInterval Duration `yaml:"refresh_interval"`
}

// A Duration is a time.Duration written as Go writes one (10s, 1m30s).
type Duration time.Duration

// LoadConfig reads and validates the configuration file at path, filling
// in defaults and reading the token and TLS files it names. Its error is
// one line naming the file, the line and the key.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scrape configuration: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig validates a configuration read from path (named in errors,
// and the directory relative file names start from).
func ParseConfig(path string, data []byte) (*Config, error) {
	d := &decoder{file: path}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, d.yamlError(err)
	}
	c := &Config{Path: path}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: the file is empty: want at least one job under scrape_configs", path)
	}
	if err := d.decode(root.Content[0], c, ""); err != nil {
		return nil, err
	}
	if err := d.check(c); err != nil {
		return nil, err
	}
	return c, nil
}

// check validates values and fills in defaults.
func (d *decoder) check(c *Config) error {
	g := &c.Global
	if err := d.interval(g, "scrape_interval", &g.ScrapeInterval, DefaultInterval); err != nil {
		return err
	}
	if g.ScrapeTimeout == 0 {
		g.ScrapeTimeout = Duration(min(DefaultTimeout, time.Duration(g.ScrapeInterval)))
	} else if g.ScrapeTimeout < 0 {
		return d.errorf(g, "scrape_timeout", "scrape_timeout: %s is negative", g.ScrapeTimeout)
	}
	if len(c.ScrapeConfigs) == 0 {
		return d.errorf(c, "scrape_configs", "no jobs: want at least one job under scrape_configs")
	}
	names := map[string]bool{}
	for i, j := range c.ScrapeConfigs {
		if j == nil {
			return d.errorf(c, "scrape_configs", "scrape_configs[%d] is empty", i)
		}
		if err := d.checkJob(c, j); err != nil {
			return err
		}
		if names[j.JobName] {
			return d.errorf(j, "job_name", "job_name %q is used by another job", j.JobName)
		}
		names[j.JobName] = true
	}
	return nil
}

func (d *decoder) checkJob(c *Config, j *Job) error {
	if j.JobName == "" {
		return d.errorf(j, "job_name", "a job without job_name: every job needs a name")
	}
	if err := d.interval(j, "scrape_interval", &j.ScrapeInterval, time.Duration(c.Global.ScrapeInterval)); err != nil {
		return err
	}
	if j.ScrapeTimeout == 0 {
		j.ScrapeTimeout = c.Global.ScrapeTimeout
	} else if j.ScrapeTimeout < 0 {
		return d.errorf(j, "scrape_timeout", "scrape_timeout: %s is negative", j.ScrapeTimeout)
	}
	switch j.Scheme {
	case "":
		j.Scheme = DefaultScheme
	case "http", "https":
	default:
		return d.errorf(j, "scheme", "scheme: %q: want http or https", j.Scheme)
	}
	switch {
	case j.PprofPath == "":
		j.PprofPath = DefaultPprofPath
	case !strings.HasPrefix(j.PprofPath, "/") || strings.ContainsAny(j.PprofPath, "?#"):
		return d.errorf(j, "pprof_path", "pprof_path: %q: want a path such as %s", j.PprofPath, DefaultPprofPath)
	case !strings.HasSuffix(j.PprofPath, "/"):
		j.PprofPath += "/"
	}
	if j.Profiles == nil {
		j.Profiles = slices.Clone(DefaultProfiles)
	}
	if len(j.Profiles) == 0 {
		return d.errorf(j, "profiles", "profiles: empty: name at least one of %s", strings.Join(profseries.Types, ", "))
	}
	seen := map[string]bool{}
	for _, p := range j.Profiles {
		if !slices.Contains(profseries.Types, p) {
			return d.errorf(j, "profiles", "profiles: unknown profile type %q%s (want %s)", short(p),
				suggest(p, profseries.Types), strings.Join(profseries.Types, ", "))
		}
		if seen[p] {
			return d.errorf(j, "profiles", "profiles: %s is named twice", p)
		}
		seen[p] = true
	}
	if j.BearerTokenFile != "" {
		data, err := os.ReadFile(d.rel(j.BearerTokenFile))
		if err != nil {
			return d.errorf(j, "bearer_token_file", "bearer_token_file: %v", err)
		}
		j.Token = strings.TrimSpace(string(data))
		if j.Token == "" {
			return d.errorf(j, "bearer_token_file", "bearer_token_file: %s is empty", j.BearerTokenFile)
		}
	}
	if err := d.checkTLS(j); err != nil {
		return err
	}
	if len(j.StaticConfigs) == 0 && len(j.FileSDConfigs) == 0 {
		return d.errorf(j, "job_name", "job %q has no targets: want static_configs or file_sd_configs", j.JobName)
	}
	for _, sc := range j.StaticConfigs {
		if sc == nil {
			return d.errorf(j, "static_configs", "static_configs: an empty entry")
		}
		if err := checkGroup(sc); err != nil {
			return d.errorf(sc, "targets", "%v", err)
		}
	}
	for _, fc := range j.FileSDConfigs {
		if fc == nil {
			return d.errorf(j, "file_sd_configs", "file_sd_configs: an empty entry")
		}
		if len(fc.Files) == 0 {
			return d.errorf(fc, "files", "file_sd_configs: no files")
		}
		for i, f := range fc.Files {
			switch filepath.Ext(f) {
			case ".json", ".yml", ".yaml":
			default:
				return d.errorf(fc, "files", "files: %q: want a .json, .yml or .yaml file", f)
			}
			if strings.ContainsAny(filepath.Dir(f), "*?[") {
				return d.errorf(fc, "files", "files: %q: only the file name may be a pattern", f)
			}
			if _, err := filepath.Match(filepath.Base(f), ""); err != nil {
				return d.errorf(fc, "files", "files: %q: %v", f, err)
			}
			fc.Files[i] = d.rel(f)
		}
		switch {
		case fc.RefreshInterval == 0:
			fc.RefreshInterval = Duration(DefaultRefreshInterval)
		case fc.RefreshInterval < Duration(time.Second):
			return d.errorf(fc, "refresh_interval", "refresh_interval: %s is under 1s", fc.RefreshInterval)
		}
	}
	return nil
}

// interval validates a scrape interval, or sets it to def when unset.
func (d *decoder) interval(owner any, key string, v *Duration, def time.Duration) error {
	switch {
	case *v == 0:
		*v = Duration(def)
	case *v < Duration(time.Second):
		return d.errorf(owner, key, "%s: %s is under 1s: a CPU profile covers the interval in whole seconds", key, *v)
	case time.Duration(*v)%time.Second != 0:
		return d.errorf(owner, key, "%s: %s is not a whole number of seconds, as CPU profiles take", key, *v)
	}
	return nil
}

func (d *decoder) checkTLS(j *Job) error {
	t := &j.TLSConfig
	if *t == (TLSConfig{}) {
		return nil
	}
	if j.Scheme != "https" {
		return d.errorf(j, "tls_config", "tls_config is set but scheme is %s: set scheme: https", j.Scheme)
	}
	cfg := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CAFile != "" {
		pem, err := os.ReadFile(d.rel(t.CAFile))
		if err != nil {
			return d.errorf(t, "ca_file", "ca_file: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return d.errorf(t, "ca_file", "ca_file: %s holds no PEM certificate", t.CAFile)
		}
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return d.errorf(t, "cert_file", "tls_config: cert_file and key_file go together: set both or neither")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(d.rel(t.CertFile), d.rel(t.KeyFile))
		if err != nil {
			return d.errorf(t, "cert_file", "cert_file, key_file: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	j.TLS = cfg
	return nil
}

// checkGroup validates a target group's targets and labels: a target is
// host:port; a label name is any non-empty text.
func checkGroup(g *StaticConfig) error {
	if len(g.Targets) == 0 {
		return errors.New("targets: none: want host:port entries")
	}
	for _, t := range g.Targets {
		if err := checkAddress(t); err != nil {
			return err
		}
	}
	for n, v := range g.Labels {
		if n == "" {
			return errors.New("labels: a label with an empty name")
		}
		if !utf8.ValidString(n) || !utf8.ValidString(v) {
			return fmt.Errorf("labels: %q is not valid UTF-8", n)
		}
	}
	return nil
}

func checkAddress(t string) error {
	if strings.Contains(t, "/") {
		return fmt.Errorf("targets: %q: want host:port; the scheme and path go in scheme and pprof_path", short(t))
	}
	host, port, err := net.SplitHostPort(t)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("targets: %q: want host:port", short(t))
	}
	return nil
}

func (d *decoder) rel(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(d.file), name)
}

// String writes the duration as Go does.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML reads a Go duration (10s, 1m30s).
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return fmt.Errorf("%q is not a duration: want one such as 10s or 1m30s", short(n.Value))
	}
	*d = Duration(v)
	return nil
}
