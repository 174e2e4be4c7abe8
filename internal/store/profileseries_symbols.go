package store

import (
	"context"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Symbols is the source of the stacks and symbols the blocks of Windows
// refer to, for computations that resolve them themselves (leaks,
// deploys).
func (ps *ProfileSeries) Symbols(ctx context.Context) profseries.SymbolSource {
	return readSymbols{ctx, ps}
}
