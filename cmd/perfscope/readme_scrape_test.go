package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/scrape"
)

// TestReadmeScrapeConfig checks that the scrape configuration the README
// shows is one perfscope scrape accepts.
func TestReadmeScrapeConfig(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### `perfscope scrape` and `perfscope query`")
	if !ok {
		t.Fatal("the README has no section on perfscope scrape")
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatal("the README's section on perfscope scrape shows no configuration")
	}
	block, _, _ = strings.Cut(block, "```")
	cfg, err := scrape.ParseConfig(filepath.Join(t.TempDir(), "scrape.yml"), []byte(block))
	if err != nil {
		t.Fatalf("the README's configuration: %v", err)
	}
	if len(cfg.ScrapeConfigs) != 1 || len(cfg.ScrapeConfigs[0].StaticConfigs) != 1 {
		t.Errorf("the README's configuration reads as %d jobs, want its one job with its targets", len(cfg.ScrapeConfigs))
	}
}
