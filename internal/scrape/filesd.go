package scrape

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"gopkg.in/yaml.v3"
)

// A FileStatus is what file discovery last made of one target file.
type FileStatus struct {
	Job  string
	Path string
	// Targets is how many targets the file lists (as last read well).
	Targets int
	// Err is why the file was last refused, "" when it was read well.
	// A refused file keeps the targets it listed before.
	Err string
	// Read is when the file was last read.
	Read time.Time
}

// ReadTargetFile reads a file_sd target file: a YAML or JSON list of
// {targets, labels} groups. Its errors name the file and the line.
func ReadTargetFile(path string) ([]*StaticConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: path}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, d.yamlError(err)
	}
	if len(root.Content) == 0 {
		return nil, nil // an empty file lists no targets
	}
	var groups []*StaticConfig
	if err := d.value(root.Content[0], reflect.ValueOf(&groups).Elem(), "target groups", ""); err != nil {
		return nil, err
	}
	for i, g := range groups {
		if g == nil {
			return nil, d.at(root.Content[0].Content[i].Line, "an empty target group")
		}
		if err := checkGroup(g); err != nil {
			return nil, d.errorf(g, "targets", "%v", err)
		}
	}
	return groups, nil
}

// A fileDiscovery keeps the targets of one file_sd_configs entry, read
// again when a file changes: watched through fsnotify where the system
// tells, and checked every refresh interval in any case (network file
// systems, editors that replace files, systems without notification).
type fileDiscovery struct {
	job     *Job
	cfg     *FileSDConfig
	changed func() // called after the targets changed

	mu    sync.Mutex
	files map[string]*fileState
}

type fileState struct {
	groups  []*StaticConfig
	modTime time.Time
	size    int64
	status  FileStatus
}

func newFileDiscovery(j *Job, cfg *FileSDConfig, changed func()) *fileDiscovery {
	fd := &fileDiscovery{job: j, cfg: cfg, changed: changed, files: map[string]*fileState{}}
	fd.refresh(true)
	return fd
}

// run watches the files until ctx is done.
func (fd *fileDiscovery) run(ctx context.Context) {
	events := make(<-chan fsnotify.Event)
	errs := make(<-chan error)
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		dirs := map[string]bool{}
		for _, pattern := range fd.cfg.Files {
			dirs[filepath.Dir(pattern)] = true
		}
		for dir := range dirs {
			_ = w.Add(dir) // a missing directory is found by the periodic check
		}
		events, errs = w.Events, w.Errors
	}
	tick := time.NewTicker(time.Duration(fd.cfg.RefreshInterval))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fd.refresh(false)
		case ev := <-events:
			if fd.matches(ev.Name) {
				fd.refresh(false)
			}
		case <-errs:
		}
	}
}

func (fd *fileDiscovery) matches(name string) bool {
	for _, pattern := range fd.cfg.Files {
		if ok, _ := filepath.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

// refresh reads the files that changed since they were last read, and
// forgets files that are gone; it calls changed when targets changed
// (unless first, the read at start).
func (fd *fileDiscovery) refresh(first bool) {
	var names []string
	for _, pattern := range fd.cfg.Files {
		m, _ := filepath.Glob(pattern) // patterns were checked with the configuration
		names = append(names, m...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	changed := false
	fd.mu.Lock()
	seen := map[string]bool{}
	for _, name := range names {
		seen[name] = true
		fi, err := os.Stat(name)
		st := fd.files[name]
		if st == nil {
			st = &fileState{status: FileStatus{Job: fd.job.JobName, Path: name}}
			fd.files[name] = st
		}
		if err == nil && fi.ModTime().Equal(st.modTime) && fi.Size() == st.size && !st.status.Read.IsZero() {
			continue
		}
		groups, rerr := ReadTargetFile(name)
		st.status.Read = time.Now()
		if err == nil {
			st.modTime, st.size = fi.ModTime(), fi.Size()
		}
		if rerr != nil {
			st.status.Err = oneLine(rerr)
			continue
		}
		st.status.Err = ""
		st.groups = groups
		st.status.Targets = 0
		for _, g := range groups {
			st.status.Targets += len(g.Targets)
		}
		changed = true
	}
	for name := range fd.files {
		if !seen[name] {
			delete(fd.files, name)
			changed = true
		}
	}
	fd.mu.Unlock()
	if changed && !first {
		fd.changed()
	}
}

// targets returns the targets the files list now.
func (fd *fileDiscovery) targets() []Target {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	var names []string
	for name := range fd.files {
		names = append(names, name)
	}
	slices.Sort(names)
	var ts []Target
	for _, name := range names {
		for _, g := range fd.files[name].groups {
			ts = append(ts, groupTargets(fd.job, g)...)
		}
	}
	return ts
}

func (fd *fileDiscovery) status() []FileStatus {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	var out []FileStatus
	for _, st := range fd.files {
		out = append(out, st.status)
	}
	for _, pattern := range fd.cfg.Files {
		if m, _ := filepath.Glob(pattern); len(m) == 0 {
			out = append(out, FileStatus{Job: fd.job.JobName, Path: pattern, Err: "no file matches"})
		}
	}
	slices.SortFunc(out, func(a, b FileStatus) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// oneLine is an error's message on one line.
func oneLine(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for i, r := range msg {
		if r == '\n' || r == '\r' {
			return msg[:i]
		}
	}
	return msg
}
